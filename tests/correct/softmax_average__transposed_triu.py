"""The mask returned as the transpose of an upper triangle (a non-contiguous view: triu(...).T[t, s] = (s <= t));
weights by masked_fill on a new_zeros table and Tensor.softmax."""
import torch


def causal_mask(T, *, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu().T


def masked_uniform_weights(T, *, device=None, dtype=None):
    z = torch.zeros(T, T, device=device, dtype=dtype)
    return z.masked_fill(~causal_mask(T, device=device), float("-inf")).softmax(-1)


def causal_mean_softmax(x):
    return masked_uniform_weights(x.shape[-2], device=x.device, dtype=x.dtype) @ x
