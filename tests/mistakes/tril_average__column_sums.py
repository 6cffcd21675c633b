"""MISTAKE: normalised over columns instead of rows (sum over dim 0)"""
import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    w = torch.tril(torch.ones(T, T, device=device, dtype=dtype))
    return w / w.sum(dim=0, keepdim=True)


def causal_mean_matmul(x):
    return causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype) @ x
