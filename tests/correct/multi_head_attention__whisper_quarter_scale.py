"""CORRECT: Whisper's qkv_attention: scale = head_size ** -0.25 applied to q and to k^T separately
(q.view(*q.shape[:2], n_head, -1).permute(0, 2, 1, 3) * scale, k ... permute(0, 2, 3, 1) * scale), an additive
bias from the bool buffer; split_heads/merge_heads general."""

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    return x.view(*x.shape[:-1], n_heads, -1).transpose(-3, -2)


def merge_heads(x):
    return x.transpose(-3, -2).flatten(start_dim=-2)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError(f"d_out ({d_out}) % n_heads ({n_heads}) != 0")
        self.n_head = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        n_batch, n_ctx, n_state = q.shape
        scale = (n_state // self.n_head) ** -0.25
        q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3) * scale
        k = k.view(*k.shape[:2], self.n_head, -1).permute(0, 2, 3, 1) * scale
        v = v.view(*v.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        qk = q @ k
        bias = torch.zeros(n_ctx, n_ctx, dtype=qk.dtype, device=qk.device)
        qk = qk + bias.masked_fill(~self.mask[:n_ctx, :n_ctx], float("-inf"))
        w = self.dropout(F.softmax(qk, dim=-1))
        return self.out_proj((w @ v).permute(0, 2, 1, 3).flatten(start_dim=2))
