"""CORRECT: a static cache (as Hugging Face's StaticCache): on the first append a (B, nh, max_len, hs) buffer is
allocated in the keys' dtype and device, new positions are copied into it and slices [:, :, :n] returned; reset()
only rewinds the position. The module slices the mask buffer with the offset, as the solution does, and splits
heads with unflatten."""
import math

import torch
from torch import nn


class KVCache:
    def __init__(self, max_len: int):
        self.max_len = max_len
        self.k_buf = None
        self.v_buf = None
        self.pos = 0

    def append(self, k_new, v_new):
        T_new = k_new.shape[-2]
        if self.pos + T_new > self.max_len:
            raise ValueError(f"cache full: {self.pos} + {T_new} > max_len={self.max_len}")
        if self.k_buf is None or self.pos == 0:
            self.k_buf = k_new.new_zeros(*k_new.shape[:-2], self.max_len, k_new.shape[-1])
            self.v_buf = v_new.new_zeros(*v_new.shape[:-2], self.max_len, v_new.shape[-1])
        self.k_buf[..., self.pos:self.pos + T_new, :] = k_new
        self.v_buf[..., self.pos:self.pos + T_new, :] = v_new
        self.pos += T_new
        return self.k_buf[..., :self.pos, :], self.v_buf[..., :self.pos, :]

    def __len__(self):
        return self.pos

    def reset(self):
        self.pos = 0


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by n_heads ({n_heads})")
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x, cache=None):
        T_new = x.shape[1]
        q, k, v = (layer(x).unflatten(-1, (self.n_heads, -1)).transpose(1, 2)
                   for layer in (self.W_query, self.W_key, self.W_value))
        offset = 0
        if cache is not None:
            offset = len(cache)
            k, v = cache.append(k, v)
        T_total = k.shape[-2]
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~self.mask[offset:offset + T_new, :T_total], float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.out_proj(out.transpose(1, 2).flatten(2))
