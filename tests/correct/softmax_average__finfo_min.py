"""CORRECT: the mask from comparing positions, the future filled with the dtype's most negative number."""
import torch


def causal_mask(T, *, device=None):
    pos = torch.arange(T, device=device)
    return pos[:, None] >= pos[None, :]


def masked_uniform_weights(T, *, device=None, dtype=None):
    scores = torch.zeros(T, T, device=device, dtype=dtype)
    scores = scores.masked_fill(~causal_mask(T, device=device), torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1)


def causal_mean_softmax(x):
    return masked_uniform_weights(x.shape[-2], device=x.device, dtype=x.dtype) @ x
