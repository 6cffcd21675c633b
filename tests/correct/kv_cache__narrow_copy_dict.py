"""CORRECT: the cache keeps a dict {"k": buffer, "v": buffer} of max_len positions allocated with torch.empty on the
first append and written with narrow(2, pos, T_new).copy_(...); len() from a position counter; append returns
slices. The module uses einsum for the scores and the weighted sum, folds the scale into q, and masks with
torch.where(visible, scores, -inf) using self.mask[offset:offset + T_new, :offset + T_new]."""

import math

import torch
from torch import nn


class KVCache:
    def __init__(self, max_len: int):
        self.max_len = max_len
        self.store: dict = {}
        self.n = 0

    def append(self, k_new, v_new):
        t = k_new.size(-2)
        if self.n + t > self.max_len:
            raise ValueError(f"cache full: {self.n} + {t} > {self.max_len}")
        if not self.store:
            self.store["k"] = torch.empty(
                *k_new.shape[:2], self.max_len, k_new.shape[-1], dtype=k_new.dtype, device=k_new.device
            )
            self.store["v"] = torch.empty(
                *v_new.shape[:2], self.max_len, v_new.shape[-1], dtype=v_new.dtype, device=v_new.device
            )
        self.store["k"].narrow(2, self.n, t).copy_(k_new)
        self.store["v"].narrow(2, self.n, t).copy_(v_new)
        self.n += t
        return self.store["k"][:, :, : self.n], self.store["v"][:, :, : self.n]

    def __len__(self):
        return self.n

    def reset(self):
        self.store = {}
        self.n = 0


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError("d_out must be divisible by n_heads")
        self.h = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        mask = torch.ones(context_length, context_length, dtype=torch.bool).tril_()
        self.register_buffer("mask", mask)

    def forward(self, x, cache=None):
        B, T, _ = x.shape
        q = self.W_query(x).unflatten(-1, (self.h, -1)).transpose(1, 2)
        k = self.W_key(x).unflatten(-1, (self.h, -1)).transpose(1, 2)
        v = self.W_value(x).unflatten(-1, (self.h, -1)).transpose(1, 2)
        q = q * (1.0 / math.sqrt(q.shape[-1]))
        offset = len(cache) if cache is not None else 0
        if cache is not None:
            k, v = cache.append(k, v)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k)
        visible = self.mask[offset : offset + T, : offset + T]
        scores = torch.where(visible, scores, torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device))
        out = torch.einsum("bhqk,bhkd->bhqd", scores.softmax(-1), v)
        return self.out_proj(out.transpose(1, 2).flatten(2))
