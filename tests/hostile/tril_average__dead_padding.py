"""Hostile: the control's Python loop over time, padded with operations whose results nothing uses, so that every
call traces the same number of operations whatever T (a graph counted without pruning would call it vectorised).

control: tril_average__loop.py
expect-fail: number of tensor operations does not grow
"""

import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    tril = torch.tril(torch.ones(T, T, device=device, dtype=dtype))
    return tril / tril.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    out = torch.empty_like(x)
    for t in range(x.shape[-2]):
        out[..., t, :] = x[..., : t + 1, :].mean(dim=-2)
    for _ in range(max(0, 400 - 3 * x.shape[-2])):
        torch.neg(x[..., :1, :1])  # dead: its result is never used
    return out
