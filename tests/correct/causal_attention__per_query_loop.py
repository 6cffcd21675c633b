"""CORRECT: attention computed one query step at a time in a Python loop: query t is scored against k[..., :t+1, :]
only (no mask at all; the slice stops at T_k by itself when T_q > T_k), its softmax weights padded with zeros to
T_k by F.pad, the rows stacked; the module drops the stacked weights with self.dropout."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def _causal_weights(q, k):
    T_q, T_k = q.shape[-2], k.shape[-2]
    rows = []
    for t in range(T_q):
        seen = k[..., : t + 1, :]  # (..., min(t + 1, T_k), hs)
        s = (q[..., t : t + 1, :] @ seen.transpose(-2, -1)).squeeze(-2) / math.sqrt(q.shape[-1])
        w = torch.softmax(s, dim=-1)
        rows.append(F.pad(w, (0, T_k - seen.shape[-2])))
    return torch.stack(rows, dim=-2)  # (..., T_q, T_k)


def causal_attention(q, k, v):
    return _causal_weights(q, k) @ v


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        return self.dropout(_causal_weights(q, k)) @ v
