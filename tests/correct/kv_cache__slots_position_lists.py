"""CORRECT: KVCache keeps Python lists of per-position (B, nh, hs) slices (unbind along time) and returns torch.stack(..., dim=-2); module as stage 8 with view/transpose; the cache declares __slots__, and after 40 positions its lists hold 80 tensors.
"""

import math

import torch
from torch import nn


class KVCache:
    __slots__ = ("max_len", "keys", "values")  # no __dict__: the trace copies slots too

    def __init__(self, max_len: int):
        self.max_len = max_len
        self.keys: list = []
        self.values: list = []

    def append(self, k_new, v_new):
        if len(self.keys) + k_new.shape[-2] > self.max_len:
            raise ValueError(f"no room for {k_new.shape[-2]} more positions (max_len={self.max_len})")
        self.keys.extend(k_new.unbind(-2))
        self.values.extend(v_new.unbind(-2))
        return torch.stack(self.keys, dim=-2), torch.stack(self.values, dim=-2)

    def __len__(self):
        return len(self.keys)

    def reset(self):
        self.keys, self.values = [], []


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, qkv_bias=False):
        super().__init__()
        if d_out % n_heads:
            raise ValueError(f"d_out ({d_out}) must be divisible by n_heads ({n_heads})")
        self.n_heads, self.head_size = n_heads, d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)).to(torch.bool))

    def forward(self, x, cache=None):
        B, T, _ = x.shape
        heads = lambda t: t.view(B, T, self.n_heads, self.head_size).transpose(1, 2)  # noqa: E731
        q, k, v = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
        start = 0
        if cache is not None:
            start = len(cache)
            k, v = cache.append(k, v)
        total = k.shape[-2]
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)
        scores = scores.masked_fill(~self.mask[start:start + T, :total], float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.out_proj(out.transpose(1, 2).contiguous().view(B, T, -1))
