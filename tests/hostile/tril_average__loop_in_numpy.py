"""Hostile: computes the running average with a Python loop over time, in numpy, where no torch operation is
seen, and returns it as a tensor: one "operation" whatever T.

control: tril_average__loop.py
expect-fail: number of tensor operations does not grow
"""

import numpy as np
import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    ones = torch.ones(T, T, device=device, dtype=dtype)
    tril = torch.tril(ones)
    return tril / tril.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    a = x.detach().cpu().numpy()
    out = np.empty_like(a)
    for t in range(a.shape[-2]):
        out[..., t, :] = a[..., : t + 1, :].mean(axis=-2)
    return torch.from_numpy(out).to(x.device)
