"""CORRECT: the weights as diag(1 / (t + 1)) @ tril(ones), a row scaling written as a matrix product; the average
as (x^T @ W^T)^T, the same product transposed."""

import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    ones = torch.ones(T, T, device=device, dtype=dtype)
    counts = torch.arange(1, T + 1, device=ones.device, dtype=ones.dtype)
    return torch.diag(torch.reciprocal(counts)) @ torch.tril(ones)


def causal_mean_matmul(x):
    W = causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype)
    return (x.transpose(-2, -1) @ W.T).transpose(-2, -1)
