"""CORRECT: a Python loop over the heads, each attending on its own slice of the projected features
[h * hs:(h + 1) * hs] with its own dropout call; outputs concatenated along the features, then out_proj.
split_heads / merge_heads with view+transpose and transpose+contiguous().view."""
import math

import torch
from torch import nn


def split_heads(x, n_heads):
    *lead, T, C = x.shape
    return x.view(*lead, T, n_heads, C // n_heads).transpose(-3, -2)


def merge_heads(x):
    *lead, nh, T, hs = x.shape
    return x.transpose(-3, -2).contiguous().view(*lead, T, nh * hs)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads:
            raise ValueError(f"d_out ({d_out}) is not divisible by n_heads ({n_heads})")
        self.n_heads, self.head_dim = n_heads, d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        visible = self.mask[:T, :T]
        heads = []
        for h in range(self.n_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            s = q[..., cols] @ k[..., cols].transpose(-2, -1) / math.sqrt(self.head_dim)
            w = torch.softmax(s.masked_fill(~visible, float("-inf")), dim=-1)
            heads.append(self.dropout(w) @ v[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))
