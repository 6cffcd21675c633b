"""CORRECT: KVCache starts from no tensor and, on the first append, from empty (B, nh, 0, hs) tensors made with
new_empty, so that every append is the same torch.cat(dim=2); reset() puts None back; __len__ via size(2) with
a guard. The module computes the mask rows from positions: arange(offset, offset + T_new)[:, None] >=
arange(T_total) (the buffer is registered as asked, but the mask is not read from it), and merges heads with
permute + reshape."""

import math

import torch
from torch import nn


class KVCache:
    def __init__(self, max_len):
        self.max_len = max_len
        self.reset()

    def reset(self):
        self.k = None
        self.v = None

    def __len__(self):
        return 0 if self.k is None else self.k.size(2)

    def append(self, k_new, v_new):
        if len(self) + k_new.size(2) > self.max_len:
            raise ValueError("too many positions for this cache")
        if self.k is None:
            self.k = k_new.new_empty(k_new.shape[0], k_new.shape[1], 0, k_new.shape[3])
            self.v = v_new.new_empty(v_new.shape[0], v_new.shape[1], 0, v_new.shape[3])
        self.k = torch.cat((self.k, k_new), dim=2)
        self.v = torch.cat((self.v, v_new), dim=2)
        return self.k, self.v


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError("d_out % n_heads != 0")
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.ones(context_length, context_length).tril().to(torch.bool))

    def forward(self, x, cache=None):
        B, T, D = x.shape
        nh = self.n_heads
        q = self.W_query(x).reshape(B, T, nh, -1).permute(0, 2, 1, 3)
        k = self.W_key(x).reshape(B, T, nh, -1).permute(0, 2, 1, 3)
        v = self.W_value(x).reshape(B, T, nh, -1).permute(0, 2, 1, 3)
        offset = 0 if cache is None else len(cache)
        if cache is not None:
            k, v = cache.append(k, v)
        T_total = k.size(2)
        rows = torch.arange(offset, offset + T, device=x.device)[:, None]
        cols = torch.arange(T_total, device=x.device)[None, :]
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        scores = scores.masked_fill(cols > rows, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.out_proj(out.permute(0, 2, 1, 3).reshape(B, T, -1))
