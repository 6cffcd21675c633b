"""CORRECT: the three projections' weights stacked into one F.linear and split, heads via swapaxes, attention in
float64, cast back."""
import math

import torch
from torch import nn

import torch.nn.functional as F


def _stable_softmax(s: torch.Tensor) -> torch.Tensor:
    s = s - s.amax(dim=-1, keepdim=True)
    e = s.exp()
    return e / e.sum(dim=-1, keepdim=True)



def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    *lead, T, C = x.shape
    hs = C // n_heads
    if hs * n_heads != C:
        raise ValueError("n_heads must divide the feature dim")
    return x.reshape(*lead, T, n_heads, hs).swapaxes(-3, -2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    *lead, nh, T, hs = x.shape
    return x.swapaxes(-3, -2).reshape(*lead, T, nh * hs)


class MultiHeadAttention(nn.Module):

    def __init__(
        self,
        d_in: int,
        d_out: int,
        n_heads: int,
        context_length: int,
        dropout: float = 0.0,
        qkv_bias: bool = False,
    ):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by n_heads ({n_heads})")
        self.d_out, self.n_heads = d_out, n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).tril().to(torch.bool))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        # one projection with the three weights stacked (as nn.MultiheadAttention's in_proj_weight)
        w = torch.cat([self.W_query.weight, self.W_key.weight, self.W_value.weight], dim=0)
        b = None
        if self.W_query.bias is not None:
            b = torch.cat([self.W_query.bias, self.W_key.bias, self.W_value.bias], dim=0)
        q, k, v = F.linear(x, w, b).split(self.d_out, dim=-1)
        q, k, v = (split_heads(t, self.n_heads).to(torch.float64) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~self.mask[:T, :T], -math.inf)
        weights = self.dropout(_stable_softmax(scores))
        out = merge_heads(weights @ v).to(x.dtype)
        return self.out_proj(out)
