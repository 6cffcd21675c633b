"""CORRECT: the cache keeps a list of chunks and concatenates on demand; heads split with unflatten; the causal
mask built from positions (torch.arange) instead of a buffer slice; the scale folded into q."""
import torch
from torch import nn


class KVCache:
    def __init__(self, max_len):
        self.max_len = max_len
        self.reset()

    def append(self, k_new, v_new):
        if len(self) + k_new.shape[-2] > self.max_len:
            raise ValueError(f"only {self.max_len - len(self)} positions left, {k_new.shape[-2]} given")
        self.k_chunks.append(k_new)
        self.v_chunks.append(v_new)
        self.n += k_new.shape[-2]
        return torch.cat(self.k_chunks, dim=-2), torch.cat(self.v_chunks, dim=-2)

    def __len__(self):
        return self.n

    def reset(self):
        self.k_chunks, self.v_chunks, self.n = [], [], 0


class CachedMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, qkv_bias=False):
        super().__init__()
        if d_out % n_heads:
            raise ValueError(f"d_out={d_out} is not a multiple of n_heads={n_heads}")
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x, cache=None):
        def heads(t):
            return t.unflatten(-1, (self.n_heads, -1)).transpose(1, 2)

        q, k, v = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
        start = 0 if cache is None else len(cache)
        if cache is not None:
            k, v = cache.append(k, v)
        if k.shape[-2] > self.mask.shape[0]:
            raise ValueError(f"{k.shape[-2]} positions exceed context_length {self.mask.shape[0]}")
        q = q * q.shape[-1] ** -0.5
        rows = torch.arange(start, start + x.shape[1], device=x.device)[:, None]
        cols = torch.arange(k.shape[-2], device=x.device)
        weights = torch.softmax((q @ k.mT).masked_fill(cols > rows, float("-inf")), dim=-1)
        return self.out_proj((weights @ v).transpose(1, 2).flatten(-2))
