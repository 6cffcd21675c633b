"""CORRECT: an amortised growable cache (as a Python list grows): a buffer of 16 positions that doubles, capped
at max_len, by allocating a larger one and copying the old one in with slice assignment; append returns views
[..., :n, :]. A step that grows the buffer does a few more operations than one that does not, at any cached
length (after 100 positions it grows, after 8 it does not). The module computes q, k, v with one F.linear on the
concatenated weights."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class KVCache:
    def __init__(self, max_len: int):
        self.max_len = max_len
        self.reset()

    def _grow(self, k_new, v_new, need):
        cap = 0 if self.k is None else self.k.shape[-2]
        if need <= cap:
            return
        new_cap = min(self.max_len, max(need, 2 * cap, 16))
        B, nh, _, hs = k_new.shape
        k_buf = k_new.new_zeros(B, nh, new_cap, hs)
        v_buf = v_new.new_zeros(B, nh, new_cap, v_new.shape[-1])
        if self.k is not None:
            k_buf[:, :, : self.n] = self.k[:, :, : self.n]
            v_buf[:, :, : self.n] = self.v[:, :, : self.n]
        self.k, self.v = k_buf, v_buf

    def append(self, k_new, v_new):
        T_new = k_new.shape[-2]
        if self.n + T_new > self.max_len:
            raise ValueError(f"cannot cache {self.n + T_new} positions, max_len is {self.max_len}")
        self._grow(k_new, v_new, self.n + T_new)
        self.k[:, :, self.n : self.n + T_new] = k_new
        self.v[:, :, self.n : self.n + T_new] = v_new
        self.n += T_new
        return self.k[:, :, : self.n], self.v[:, :, : self.n]

    def __len__(self):
        return self.n

    def reset(self):
        self.k = None
        self.v = None
        self.n = 0


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError("n_heads must divide d_out")
        self.d_out, self.nh = d_out, n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.ones(context_length, context_length).tril().to(torch.bool))

    def _qkv(self, x):
        w = torch.cat([self.W_query.weight, self.W_key.weight, self.W_value.weight], dim=0)
        b = None
        if self.W_query.bias is not None:
            b = torch.cat([self.W_query.bias, self.W_key.bias, self.W_value.bias])
        return F.linear(x, w, b).split(self.d_out, dim=-1)

    def forward(self, x, cache=None):
        B, T, _ = x.shape
        hs = self.d_out // self.nh
        q, k, v = (t.reshape(B, T, self.nh, hs).transpose(1, 2) for t in self._qkv(x))
        off = len(cache) if cache is not None else 0
        if cache is not None:
            k, v = cache.append(k, v)
        S = k.shape[-2]
        q = q * (1.0 / math.sqrt(hs))
        att = q @ k.transpose(-2, -1)
        att = att.masked_fill(~self.mask[off : off + T, :S], float("-inf"))
        att = att.softmax(-1)
        return self.out_proj((att @ v).transpose(1, 2).reshape(B, T, self.d_out))
