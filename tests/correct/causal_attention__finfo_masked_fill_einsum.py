"""einsum; the future filled with torch.finfo(dtype).min via masked_fill; the mask built as tril(ones).bool() (a float
tril cast); the buffer sliced with narrow; F.softmax."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def causal_attention(q, k, v):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])
    keep = torch.tril(torch.ones(T_q, T_k, device=q.device)).bool()
    scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
    return torch.einsum("...qk,...kd->...qd", F.softmax(scores, dim=-1), v)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)).bool())

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.einsum("bqd,bkd->bqk", q, k) / math.sqrt(k.shape[-1])
        keep = self.mask.narrow(0, 0, T).narrow(1, 0, T)
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        weights = self.dropout(F.softmax(scores, dim=-1))
        return torch.einsum("bqk,bkd->bqd", weights, v)
