"""CORRECT: the cache keeps one tuple (keys, values) or None and rebuilds it with torch.cat on each append;
overflow checked with an explicit count; the module projects q, k, v with one torch.stack of the three layers'
outputs and splits heads from it, uses an additive float mask made from the buffer rows (0 or -inf via
torch.zeros_like(...).masked_fill), and the offset from len(cache)."""

import math

import torch
from torch import nn


class KVCache:
    def __init__(self, max_len):
        self.max_len = max_len
        self.kv = None

    def __len__(self):
        return 0 if self.kv is None else int(self.kv[0].shape[-2])

    def append(self, k_new, v_new):
        if len(self) + int(k_new.shape[-2]) > self.max_len:
            raise ValueError("KVCache: max_len exceeded")
        if self.kv is None:
            self.kv = (k_new, v_new)
        else:
            self.kv = (torch.cat((self.kv[0], k_new), -2), torch.cat((self.kv[1], v_new), -2))
        return self.kv

    def reset(self):
        self.kv = None


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError("n_heads must divide d_out")
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x, cache=None):
        B, T, _ = x.shape
        qkv = torch.stack([self.W_query(x), self.W_key(x), self.W_value(x)])  # (3, B, T, d_out)
        qkv = qkv.view(3, B, T, self.n_heads, -1).permute(0, 1, 3, 2, 4)  # (3, B, nh, T, hs)
        q, k, v = qkv[0], qkv[1], qkv[2]
        start = len(cache) if cache is not None else 0
        if cache is not None:
            k, v = cache.append(k, v)
        rows = self.mask[start : start + T, : k.shape[-2]]
        bias = torch.zeros(rows.shape, dtype=q.dtype, device=q.device).masked_fill(~rows, float("-inf"))
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + bias, dim=-1)
        return self.out_proj((att @ v).transpose(1, 2).reshape(B, T, -1))
