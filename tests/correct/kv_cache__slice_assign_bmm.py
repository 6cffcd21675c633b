"""CORRECT: buffers allocated on the append at position 0 with torch.zeros(..., dtype, device) and filled by slice
assignment self.k[:, :, s:e] = k_new; reset() only rewinds the position counter (the next append allocates new
buffers); the module folds batch and heads together and uses torch.bmm, with the mask rows taken by
self.mask[offset:][:T_new, :T_total]."""

import math

import torch
from torch import nn


class KVCache:
    def __init__(self, max_len):
        self.max_len = max_len
        self.k = self.v = None
        self.end = 0

    def append(self, k_new, v_new):
        s, e = self.end, self.end + k_new.shape[-2]
        if e > self.max_len:
            raise ValueError("the cache holds at most %d positions" % self.max_len)
        fresh = self.k is None or self.end == 0
        if fresh:
            B, H, _, D = k_new.shape
            self.k = torch.zeros(B, H, self.max_len, D, dtype=k_new.dtype, device=k_new.device)
            self.v = torch.zeros(B, H, self.max_len, v_new.shape[-1], dtype=v_new.dtype, device=v_new.device)
        self.k[:, :, s:e] = k_new
        self.v[:, :, s:e] = v_new
        self.end = e
        return self.k[:, :, :e], self.v[:, :, :e]

    def __len__(self):
        return self.end

    def reset(self):
        self.end = 0


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, qkv_bias=False):
        super().__init__()
        if d_out % n_heads:
            raise ValueError("bad n_heads")
        self.nh, self.hs = n_heads, d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x, cache=None):
        B, T_new, _ = x.shape
        nh, hs = self.nh, self.hs

        def heads(t):
            return t.view(B, T_new, nh, hs).transpose(1, 2)

        q, k, v = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
        offset = 0
        if cache is not None:
            offset = len(cache)
            k, v = cache.append(k, v)
        T_total = k.shape[-2]
        scores = torch.bmm(q.reshape(B * nh, T_new, hs), k.reshape(B * nh, T_total, hs).transpose(1, 2))
        scores = scores.view(B, nh, T_new, T_total) / math.sqrt(hs)
        visible = self.mask[offset:][:T_new, :T_total]
        w = torch.softmax(scores.masked_fill(visible.logical_not(), float("-inf")), dim=-1)
        out = torch.bmm(w.reshape(B * nh, T_new, T_total), v.reshape(B * nh, T_total, hs))
        return self.out_proj(out.view(B, nh, T_new, hs).transpose(1, 2).reshape(B, T_new, nh * hs))
