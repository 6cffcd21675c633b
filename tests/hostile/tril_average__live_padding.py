"""Hostile: the control's Python loop over time, with the count of operations kept the same at every T by identity
operations on the output (out * 1.0), which the answer depends on: pruning unused nodes leaves them in.

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
    for _ in range(max(0, 600 - 3 * x.shape[-2])):
        out = out * 1.0
    return out
