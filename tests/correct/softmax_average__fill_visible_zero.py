"""CORRECT: starts from a table full of -inf and writes 0 where the mask is True (masked_fill(mask, 0.0), the
mask itself, not its negation); the mask from tril of a float table converted with .bool()."""

import math

import torch


def causal_mask(T: int, *, device=None) -> torch.Tensor:
    return torch.tril(torch.ones(T, T, device=device)).bool()


def masked_uniform_weights(T: int, *, device=None, dtype=None) -> torch.Tensor:
    scores = torch.full((T, T), -math.inf, device=device, dtype=dtype)
    scores = scores.masked_fill(causal_mask(T, device=device), 0.0)
    return scores.softmax(dim=-1)


def causal_mean_softmax(x: torch.Tensor) -> torch.Tensor:
    w = masked_uniform_weights(x.shape[-2], device=x.device, dtype=x.dtype)
    return torch.matmul(w, x)
