"""CORRECT: the cache kept as pages of 16 positions written in place and joined with cat on read; bmm over folded
heads."""

import torch
from torch import nn

_PAGE = 16  # positions per page of the cache



class KVCache:

    def __init__(self, max_len: int):
        self.max_len = max_len
        self.reset()

    def append(self, k_new: torch.Tensor, v_new: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        T_new = k_new.shape[-2]
        if self.n + T_new > self.max_len:
            raise ValueError(f"KVCache: {self.n} + {T_new} positions exceed max_len={self.max_len}")
        done = 0
        while done < T_new:
            capacity = len(self.k_pages) * _PAGE if self.k_pages else 0
            if self.n == capacity or not self.k_pages:  # the last page is full: add one (capped at max_len)
                size = min(_PAGE, self.max_len - capacity)
                self.k_pages.append(k_new.new_zeros((*k_new.shape[:-2], size, k_new.shape[-1])))
                self.v_pages.append(v_new.new_zeros((*v_new.shape[:-2], size, v_new.shape[-1])))
            page_k, page_v = self.k_pages[-1], self.v_pages[-1]
            at = self.n - (len(self.k_pages) - 1) * _PAGE
            take = min(page_k.shape[-2] - at, T_new - done)
            page_k[..., at:at + take, :] = k_new[..., done:done + take, :]
            page_v[..., at:at + take, :] = v_new[..., done:done + take, :]
            self.n += take
            done += take
        keys = self.k_pages[0] if len(self.k_pages) == 1 else torch.cat(self.k_pages, dim=-2)
        values = self.v_pages[0] if len(self.v_pages) == 1 else torch.cat(self.v_pages, dim=-2)
        return keys[..., :self.n, :], values[..., :self.n, :]

    def __len__(self) -> int:
        return self.n

    def reset(self) -> None:
        self.k_pages: list[torch.Tensor] = []
        self.v_pages: list[torch.Tensor] = []
        self.n = 0


class CachedMultiHeadAttention(nn.Module):

    def __init__(self, d_in: int, d_out: int, n_heads: int, context_length: int, qkv_bias: bool = False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by n_heads ({n_heads})")
        self.n_heads, self.head_size = n_heads, d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        B, T_new, d_in = x.shape
        heads = [t.view(B, T_new, self.n_heads, self.head_size) for t in (self.W_query(x), self.W_key(x), self.W_value(x))]
        q, k, v = (t.transpose(1, 2) for t in heads)
        offset = 0 if cache is None else len(cache)
        if cache is not None:
            k, v = cache.append(k, v)
        T_total = k.shape[-2]
        qf = q.reshape(B * self.n_heads, T_new, self.head_size) * self.head_size ** -0.5
        kf = k.reshape(B * self.n_heads, T_total, self.head_size)
        vf = v.reshape(B * self.n_heads, T_total, self.head_size)
        scores = torch.bmm(qf, kf.transpose(1, 2))
        scores = scores.masked_fill(~self.mask[offset:offset + T_new, :T_total], float("-inf"))
        out = torch.bmm(torch.softmax(scores, dim=-1), vf).view(B, self.n_heads, T_new, self.head_size)
        return self.out_proj(out.transpose(1, 2).reshape(B, T_new, -1))
