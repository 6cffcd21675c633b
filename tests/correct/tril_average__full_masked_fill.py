"""CORRECT: the (T, 1) reciprocal counts broadcast by expand, then masked_fill(0) above the
diagonal (a bool triu(1) mask); the product with einsum "ij,...jk->...ik"."""

import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    recip = 1.0 / torch.arange(1, T + 1, device=device, dtype=dtype or torch.get_default_dtype())
    w = recip.unsqueeze(-1).expand(T, T)
    future = torch.ones(T, T, dtype=torch.bool, device=device).triu(1)
    return w.masked_fill(future, 0.0)


def causal_mean_matmul(x):
    W = causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype)
    return torch.einsum("ij,...jk->...ik", W, x)
