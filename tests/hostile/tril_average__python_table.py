"""Hostile: the averaging weights built by a Python loop over time in plain lists, then made one tensor with
torch.tensor: the trace sees a constant (it depends on T only, so a replay on other inputs still agrees) and one @,
whatever T.

control: tril_average__loop.py
expect-fail: number of tensor operations does not grow
"""

import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    rows = [[1.0 / (t + 1) if s <= t else 0.0 for s in range(T)] for t in range(T)]
    return torch.tensor(rows, device=device, dtype=dtype or torch.get_default_dtype())


def causal_mean_matmul(x):
    return causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype) @ x
