"""CORRECT: KVCache.append returns a typing.NamedTuple KV(keys, values) (a tuple, so `k, v = cache.append(...)` works); the module unpacks it; otherwise stage 8's head split with view/transpose and the buffer rows offset .. offset+T_new-1."""

import math
from typing import NamedTuple

import torch
from torch import nn


class KV(NamedTuple):
    keys: torch.Tensor
    values: torch.Tensor


class KVCache:
    def __init__(self, max_len: int):
        self.max_len = max_len
        self.keys = None
        self.values = None

    def append(self, k_new, v_new) -> KV:
        if len(self) + k_new.shape[-2] > self.max_len:
            raise ValueError(f"KVCache overflow (max_len={self.max_len})")
        if self.keys is None:
            self.keys, self.values = k_new, v_new
        else:
            self.keys = torch.cat([self.keys, k_new], dim=-2)
            self.values = torch.cat([self.values, v_new], dim=-2)
        return KV(self.keys, self.values)

    def __len__(self):
        return 0 if self.keys is None else self.keys.shape[-2]

    def reset(self):
        self.keys = self.values = None


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by n_heads ({n_heads})")
        self.n_heads, self.head_size = n_heads, d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x, cache=None):
        B, T_new, _ = x.shape
        sp = lambda t: t.view(B, T_new, self.n_heads, self.head_size).transpose(1, 2)
        q, k, v = sp(self.W_query(x)), sp(self.W_key(x)), sp(self.W_value(x))
        offset = 0
        if cache is not None:
            offset = len(cache)
            kv = cache.append(k, v)
            k, v = kv.keys, kv.values
        T_total = k.shape[-2]
        s = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)
        s = s.masked_fill(~self.mask[offset:offset + T_new, :T_total], float("-inf"))
        y = torch.softmax(s, dim=-1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(B, T_new, -1))
