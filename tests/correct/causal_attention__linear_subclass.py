"""CORRECT: the projections are instances of a trivial nn.Linear subclass (class Projection(nn.Linear), adding only a name to its repr: isinstance(layer, nn.Linear) holds); otherwise: the future filled with torch.finfo(dtype).min through torch.where (every row keeps at least key 0 visible, so the min behaves like -inf); a shared helper taking the visible mask and an optional dropout module; matmul with .mT."""

import math
from typing import Optional

import torch
from torch import nn


class Projection(nn.Linear):
    """An nn.Linear whose repr says which projection it is."""

    def __init__(self, in_features, out_features, bias=True, *, role=""):
        super().__init__(in_features, out_features, bias=bias)
        self.role = role

    def extra_repr(self):
        return f"{self.role}: " + super().extra_repr()


def _masked_softmax_attend(q, k, v, visible, dropout: Optional[nn.Module] = None):
    scores = (q @ k.mT) / math.sqrt(q.shape[-1])
    neg = torch.finfo(scores.dtype).min
    scores = torch.where(visible, scores, neg)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ v


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    visible = torch.tril(torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device))
    return _masked_softmax_attend(q, k, v, visible)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in: int, head_size: int, context_length: int, dropout: float = 0.0, qkv_bias: bool = False):
        super().__init__()
        self.context_length = context_length
        self.W_query = Projection(d_in, head_size, bias=qkv_bias, role="query")
        self.W_key = Projection(d_in, head_size, bias=qkv_bias, role="key")
        self.W_value = Projection(d_in, head_size, bias=qkv_bias, role="value")
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[-2]
        assert T <= self.context_length, f"T={T} > context_length={self.context_length}"
        return _masked_softmax_attend(self.W_query(x), self.W_key(x), self.W_value(x), self.mask[:T, :T], self.dropout)
