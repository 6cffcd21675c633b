"""Control of the tril_average loop attacks: the same Python loop over time, with torch operations, without any
trick."""

import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    ones = torch.ones(T, T, device=device, dtype=dtype)
    tril = torch.tril(ones)
    return tril / tril.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    out = torch.empty_like(x)
    for t in range(x.shape[-2]):
        out[..., t, :] = x[..., : t + 1, :].mean(dim=-2)
    return out
