"""CORRECT: KVCache as a @dataclass (max_len, then keys/values fields defaulting to None); the module scales q,
builds the rows of the mask for the new positions by slicing the buffer with the offset, and uses torch.where."""
from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn


@dataclass
class KVCache:
    max_len: int
    keys: Optional[torch.Tensor] = None
    values: Optional[torch.Tensor] = None

    def __len__(self) -> int:
        return 0 if self.keys is None else self.keys.shape[-2]

    def append(self, k_new: torch.Tensor, v_new: torch.Tensor):
        if len(self) + k_new.shape[-2] > self.max_len:
            raise ValueError(f"KVCache of max_len {self.max_len} is full ({len(self)} cached)")
        if self.keys is None:
            self.keys, self.values = k_new, v_new
        else:
            self.keys = torch.cat([self.keys, k_new], dim=-2)
            self.values = torch.cat([self.values, v_new], dim=-2)
        return self.keys, self.values

    def reset(self) -> None:
        self.keys = None
        self.values = None


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in: int, d_out: int, n_heads: int, context_length: int, qkv_bias: bool = False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError(f"d_out={d_out} not divisible by n_heads={n_heads}")
        self.n_heads, self.head_size = n_heads, d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)).bool())

    def _split(self, t: torch.Tensor) -> torch.Tensor:
        B, T, _ = t.shape
        return t.reshape(B, T, self.n_heads, self.head_size).transpose(1, 2)

    def forward(self, x: torch.Tensor, cache: Optional[KVCache] = None) -> torch.Tensor:
        B, T_new, _ = x.shape
        q = self._split(self.W_query(x)) * self.head_size ** -0.5
        k, v = self._split(self.W_key(x)), self._split(self.W_value(x))
        start = 0
        if cache is not None:
            start = len(cache)
            k, v = cache.append(k, v)
        visible = self.mask[start:start + T_new, : start + T_new]
        scores = torch.where(visible, q @ k.transpose(-2, -1), float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.out_proj(out.transpose(1, 2).reshape(B, T_new, -1))
