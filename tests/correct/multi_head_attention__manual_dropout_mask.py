"""Dropout on the attention weights written out with a Bernoulli keep-mask (rand_like(w) >= p, scaled by 1/(1-p)) when
self.training and p > 0, using self.dropout.p; otherwise GPT-style reshape/transpose; the mask from tril(ones) == 1."""
import math

import torch
from torch import nn


def split_heads(x, n_heads):
    return x.reshape(*x.shape[:-1], n_heads, x.shape[-1] // n_heads).transpose(-3, -2)


def merge_heads(x):
    x = x.transpose(-3, -2)
    return x.reshape(*x.shape[:-2], -1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError(f"d_out={d_out} not divisible by n_heads={n_heads}")
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)) == 1)

    def _drop(self, w):
        p = self.dropout.p
        if not self.training or p == 0.0:
            return w
        keep = torch.rand_like(w) >= p
        return w * keep / (1.0 - p)

    def forward(self, x):
        T = x.shape[1]
        q = split_heads(self.W_query(x), self.n_heads)
        k = split_heads(self.W_key(x), self.n_heads)
        v = split_heads(self.W_value(x), self.n_heads)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        s = s.masked_fill(~self.mask[:T, :T], float("-inf"))
        w = self._drop(torch.softmax(s, dim=-1))
        return self.out_proj(merge_heads(w @ v))
