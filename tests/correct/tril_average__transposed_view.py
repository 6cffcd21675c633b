"""Weights as the transpose of (upper triangle / column counts): element [t, s] = (s <= t) / (t + 1), returned as a
non-contiguous view; the product W @ x."""
import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    upper = torch.ones(T, T, device=device, dtype=dtype).triu()
    counts = torch.arange(1, T + 1, device=upper.device, dtype=upper.dtype)
    return (upper / counts[None, :]).T


def causal_mean_matmul(x):
    return causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype) @ x
