"""CORRECT: the lower triangle's (row, column) indices from one-argument torch.where (nonzero), filled with
1/(row+1) on a table of zeros."""
import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    w = torch.zeros(T, T, device=device, dtype=dtype)
    rows, cols = torch.where(torch.ones(T, T, dtype=torch.bool, device=device).tril())
    steps = torch.arange(1, T + 1, device=device, dtype=w.dtype)  # 1, 2, ..., T
    w[rows, cols] = 1.0 / steps[rows]
    return w


def causal_mean_matmul(x):
    return causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype) @ x
