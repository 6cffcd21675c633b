"""Hostile: the control's Python loop over time, writing through torch.ops.aten._unsafe_view of the output, an op
whose schema says it makes new memory although it returns a view: a liveness read from schemas would call every
step dead and count one op at every T. The judge reads memory from its own replay instead.

control: tril_average__loop.py
expect-fail: number of tensor operations does not grow
"""

import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    tril = torch.tril(torch.ones(T, T, device=device, dtype=dtype))
    return tril / tril.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    out = torch.zeros_like(x)
    alias = torch.ops.aten._unsafe_view(out, list(out.shape))
    for t in range(x.shape[-2]):
        alias[..., t, :] = x[..., : t + 1, :].mean(dim=-2)
    return out
