"""CORRECT: the additive mask of many codebases: torch.triu of a table full of -inf with diagonal=1 (0 on and
below the diagonal, -inf above), softmaxed with F.softmax(dim=1); the mask as ~triu(1)."""

import torch
import torch.nn.functional as F


def causal_mask(T, *, device=None):
    return ~torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)


def masked_uniform_weights(T, *, device=None, dtype=None):
    scores = torch.triu(torch.full((T, T), float("-inf"), device=device, dtype=dtype), diagonal=1)
    return F.softmax(scores, dim=1)


def causal_mean_softmax(x):
    return masked_uniform_weights(x.shape[-2], device=x.device, dtype=x.dtype) @ x
