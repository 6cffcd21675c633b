"""CORRECT: heads split by chunk(n_heads, dim=-1) stacked on a new dim -3, merged by unbind(-3) and cat(dim=-1);
the module's projections split with the same helpers."""
import math

import torch
from torch import nn


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    return torch.stack(x.chunk(n_heads, dim=-1), dim=-3)  # nh tensors (..., T, hs) -> (..., nh, T, hs)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    return torch.cat(x.unbind(dim=-3), dim=-1)  # nh tensors (..., T, hs) -> (..., T, nh * hs)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError(f"n_heads={n_heads} does not divide d_out={d_out}")
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        T = x.shape[1]
        q = split_heads(self.W_query(x), self.n_heads)
        k = split_heads(self.W_key(x), self.n_heads)
        v = split_heads(self.W_value(x), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        return self.out_proj(merge_heads(weights @ v))
