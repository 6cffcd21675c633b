"""CORRECT: torchtune-style: KVCache is an nn.Module whose keys and values are registered (non-persistent) buffers,
allocated lazily on the first append at max_len positions and filled by slice assignment; a cache_pos counter;
append returns slices. The module's forward takes the mask rows with index_select on arange(offset, offset+T_new)."""
import math

import torch
from torch import nn


class KVCache(nn.Module):
    def __init__(self, max_len: int):
        super().__init__()
        self.max_len = max_len
        self.register_buffer("k_cache", None, persistent=False)
        self.register_buffer("v_cache", None, persistent=False)
        self.cache_pos = 0

    def append(self, k_new: torch.Tensor, v_new: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        T_new = k_new.shape[-2]
        if self.cache_pos + T_new > self.max_len:
            raise ValueError(f"KVCache is full ({self.cache_pos}/{self.max_len}), cannot add {T_new}")
        if self.k_cache is None:
            self.k_cache = k_new.new_zeros(*k_new.shape[:-2], self.max_len, k_new.shape[-1])
            self.v_cache = v_new.new_zeros(*v_new.shape[:-2], self.max_len, v_new.shape[-1])
        end = self.cache_pos + T_new
        self.k_cache[..., self.cache_pos:end, :] = k_new
        self.v_cache[..., self.cache_pos:end, :] = v_new
        self.cache_pos = end
        return self.k_cache[..., :end, :], self.v_cache[..., :end, :]

    def __len__(self) -> int:
        return self.cache_pos

    def reset(self) -> None:
        self.k_cache = None
        self.v_cache = None
        self.cache_pos = 0


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in: int, d_out: int, n_heads: int, context_length: int, qkv_bias: bool = False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError("n_heads must divide d_out")
        self.num_heads = n_heads
        self.head_dim = d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)).bool())

    def forward(self, x: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        b, s_x, _ = x.shape
        q = self.W_query(x).view(b, s_x, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, s_x, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, s_x, self.num_heads, self.head_dim).transpose(1, 2)
        pos = 0
        if cache is not None:
            pos = len(cache)
            k, v = cache.append(k, v)
        s_kv = k.shape[-2]
        rows = torch.arange(pos, pos + s_x, device=x.device)
        visible = self.mask.index_select(0, rows)[:, :s_kv]
        attn = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        attn = attn.masked_fill(~visible, float("-inf")).softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, s_x, -1)
        return self.out_proj(out)
