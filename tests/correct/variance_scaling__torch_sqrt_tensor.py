"""The scale as torch.sqrt of a tensor made with q.new_tensor (so in q's dtype and device); swapaxes."""
import torch


def scaled_scores(q, k):
    d_k = q.new_tensor(q.shape[-1])
    return (q @ k.swapaxes(-2, -1)) / torch.sqrt(d_k)
