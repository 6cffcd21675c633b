"""CORRECT: out_proj is torch.nn.modules.linear.NonDynamicallyQuantizableLinear(d_out, d_out), the nn.Linear subclass that torch.nn.MultiheadAttention itself uses for its out_proj (copied from PyTorch's source); otherwise: einsum with named letters ('bhqd,bhkd->bhqk', 'bhqk,bhkd->bhqd'); the scale as math.sqrt reciprocal multiplied; split with view on the last dim after reshape guards; F.softmax."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    C = x.shape[-1]
    hs = C // n_heads
    return x.reshape(x.shape[:-1] + (n_heads, hs)).transpose(-2, -3)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    nh, T, hs = x.shape[-3:]
    return x.transpose(-2, -3).reshape(x.shape[:-3] + (T, nh * hs))


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError("d_out must be divisible by n_heads (got %d and %d)" % (d_out, n_heads))
        self.nh = n_heads
        self.hs = d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.modules.linear.NonDynamicallyQuantizableLinear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x):
        T = x.shape[1]
        q = split_heads(self.W_query(x), self.nh)
        k = split_heads(self.W_key(x), self.nh)
        v = split_heads(self.W_value(x), self.nh)
        att = torch.einsum("bhqd,bhkd->bhqk", q, k) * (1.0 / math.sqrt(self.hs))
        att = att.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        att = self.dropout(F.softmax(att, dim=-1))
        y = torch.einsum("bhqk,bhkd->bhqd", att, v)
        return self.out_proj(merge_heads(y))
