"""The mask added as log of a 0/1 lower triangle in the scores' dtype (log 1 = 0, log 0 = -inf); the buffer a bool
tril; forward converts the sliced bool buffer with .to(scores.dtype) before the log."""
import math

import torch
from torch import nn


def _attend(q, k, v, keep, dropout=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    s = s + torch.log(keep.to(s.dtype))
    w = torch.softmax(s, dim=-1)
    if dropout is not None:
        w = dropout(w)
    return w @ v


def causal_attention(q, k, v):
    keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
    return _attend(q, k, v, keep)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        T = x.shape[1]
        return _attend(self.W_query(x), self.W_key(x), self.W_value(x), self.mask[:T, :T], self.dropout)
