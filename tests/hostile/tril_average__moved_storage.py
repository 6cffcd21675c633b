"""Hostile: the control's Python loop over time, writing into a buffer whose memory was moved after the returned
view was made (an out= op grows an empty view at its end, and the storage is reallocated): read by data pointer,
the returned view and the writes would be two memories and every step dead. The judge tells storages apart by
torch's storage object, which a resize keeps.

control: tril_average__loop.py
expect-fail: number of tensor operations does not grow
"""

import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    tril = torch.tril(torch.ones(T, T, device=device, dtype=dtype))
    return tril / tril.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    N = x.numel()
    flat = torch.zeros(N, dtype=x.dtype, device=x.device)
    out = flat.view(x.shape)
    torch.zeros(1, out=flat[N:])  # the storage grows, and moves
    for t in range(x.shape[-2]):
        out[..., t, :] = x[..., : t + 1, :].mean(dim=-2)
    return out
