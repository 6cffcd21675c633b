"""Hostile: a Python loop over time computes every answer; only while the worker traces the call does it
dispatch one scaled_dot_product_attention instead, so that the graph is a few ops: a graph with a forbidden op is
never replayed, and its op count was read as if it had been.

control: tril_average__loop.py
expect-fail: number of tensor operations does not grow
"""

import sys

import torch
import torch.nn.functional as F


def _in_trace():
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "capture_graph":
            return True
        f = f.f_back
    return False


def causal_mean_weights(T, *, device=None, dtype=None):
    tril = torch.tril(torch.ones(T, T, device=device, dtype=dtype))
    return tril / tril.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    if _in_trace():
        return F.scaled_dot_product_attention(x, x, x)
    out = torch.empty_like(x)
    for t in range(x.shape[-2]):
        out[..., t, :] = x[..., : t + 1, :].mean(dim=-2)
    return out
