"""CORRECT: a preallocated cache: on the first append (B, nh, max_len, hs) buffers are made with new_zeros and every
append writes with index_copy_ along dim 2 at torch.arange(pos, pos + T_new); append returns narrow() views.
The module reads the offset after the append (len(cache) - T_new) and takes the mask rows of the new tokens as
the last T_new rows of the top-left (T_total, T_total) square."""

import math

import torch
from torch import nn


class KVCache:
    def __init__(self, max_len):
        self.max_len = max_len
        self.k_buf = None
        self.v_buf = None
        self.pos = 0

    def append(self, k_new, v_new):
        n = k_new.shape[2]
        if self.pos + n > self.max_len:
            raise ValueError("KV cache overflow")
        if self.k_buf is None:
            B, nh, _, hs = k_new.shape
            self.k_buf = k_new.new_zeros(B, nh, self.max_len, hs)
            self.v_buf = v_new.new_zeros(B, nh, self.max_len, v_new.shape[-1])
        idx = torch.arange(self.pos, self.pos + n, device=k_new.device)
        self.k_buf.index_copy_(2, idx, k_new)
        self.v_buf.index_copy_(2, idx, v_new)
        self.pos += n
        return self.k_buf.narrow(2, 0, self.pos), self.v_buf.narrow(2, 0, self.pos)

    def __len__(self):
        return self.pos

    def reset(self):
        self.k_buf = self.v_buf = None
        self.pos = 0


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, qkv_bias=False):
        super().__init__()
        if d_out % n_heads:
            raise ValueError("n_heads must divide d_out")
        self.n_heads, self.hs = n_heads, d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)).bool())

    def _heads(self, t):
        B, T, _ = t.shape
        return t.view(B, T, self.n_heads, self.hs).transpose(1, 2)

    def forward(self, x, cache=None):
        B, T_new, _ = x.shape
        q, k, v = self._heads(self.W_query(x)), self._heads(self.W_key(x)), self._heads(self.W_value(x))
        if cache is not None:
            k, v = cache.append(k, v)
        T_total = k.shape[2]
        visible = self.mask[:T_total, :T_total][T_total - T_new :]
        att = (q @ k.transpose(2, 3)) / math.sqrt(self.hs)
        att = att.masked_fill(~visible, float("-inf")).softmax(dim=-1)
        return self.out_proj((att @ v).transpose(1, 2).reshape(B, T_new, -1))
