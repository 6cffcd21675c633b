"""CORRECT: overflow and bad head counts raise CacheConfigError, a subclass of ValueError (class CacheConfigError(ValueError)), so `except ValueError` catches them; the cache keeps a dict {'k': ..., 'v': ...} and an integer counter of positions; the module scales the scores by math.sqrt reciprocal, slices the buffer with narrow(0, offset, T_new), and merges heads with transpose + contiguous + view."""

import math

import torch
from torch import nn


class CacheConfigError(ValueError):
    """A KV cache or attention size that cannot work (a ValueError)."""


class KVCache:
    def __init__(self, max_len: int):
        self.max_len = max_len
        self._store: dict[str, torch.Tensor] = {}
        self._n = 0

    def append(self, k_new: torch.Tensor, v_new: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        T_new = k_new.size(-2)
        if self._n + T_new > self.max_len:
            raise CacheConfigError(f"cache overflow: {self._n} + {T_new} > {self.max_len}")
        if self._n == 0:
            self._store["k"], self._store["v"] = k_new, v_new
        else:
            self._store["k"] = torch.cat((self._store["k"], k_new), dim=-2)
            self._store["v"] = torch.cat((self._store["v"], v_new), dim=-2)
        self._n += T_new
        return self._store["k"], self._store["v"]

    def __len__(self) -> int:
        return self._n

    def reset(self) -> None:
        self._store.clear()
        self._n = 0


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in: int, d_out: int, n_heads: int, context_length: int, qkv_bias: bool = False):
        super().__init__()
        if d_out % n_heads:
            raise CacheConfigError(f"n_heads ({n_heads}) must divide d_out ({d_out})")
        self.d_out, self.n_heads, self.head_size = d_out, n_heads, d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def _split(self, t: torch.Tensor) -> torch.Tensor:
        B, T, _ = t.shape
        return t.view(B, T, self.n_heads, self.head_size).transpose(1, 2)

    def forward(self, x: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        B, T_new, _ = x.shape
        q, k, v = self._split(self.W_query(x)), self._split(self.W_key(x)), self._split(self.W_value(x))
        offset = 0 if cache is None else len(cache)
        if cache is not None:
            k, v = cache.append(k, v)
        T_total = k.size(-2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_size))
        visible = self.mask.narrow(0, offset, T_new).narrow(1, 0, T_total)
        scores = scores.masked_fill(~visible, float("-inf"))
        w = torch.softmax(scores, dim=-1)
        y = (w @ v).transpose(1, 2).contiguous().view(B, T_new, self.d_out)
        return self.out_proj(y)
