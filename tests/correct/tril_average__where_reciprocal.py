"""CORRECT: weights from torch.where on a comparison of positions: 1/(t+1) where s <= t, else 0 (a zero tensor of
the same dtype); the product with torch.matmul."""

import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    dtype = dtype if dtype is not None else torch.get_default_dtype()
    t = torch.arange(T, device=device, dtype=dtype).unsqueeze(1)  # (T, 1)
    s = torch.arange(T, device=device, dtype=dtype).unsqueeze(0)  # (1, T)
    return torch.where(s <= t, 1.0 / (t + 1), torch.zeros((), device=device, dtype=dtype))


def causal_mean_matmul(x):
    return torch.matmul(causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype), x)
