"""Dropout via F.dropout(p=self.dropout.p, training=self.training) (same as calling the nn.Dropout); the softmax
written out with max-subtraction; the buffer from ~torch.ones(L, L).triu(1).bool(); torch.matmul and mT."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def _softmax_lastdim(s):
    s = s - s.max(dim=-1, keepdim=True).values
    p = s.exp()
    return p / p.sum(dim=-1, keepdim=True)


def causal_attention(q, k, v):
    future = torch.ones(q.shape[-2], k.shape[-2], device=q.device).triu(1).bool()
    s = torch.matmul(q, k.mT).div(math.sqrt(q.shape[-1])).masked_fill(future, float("-inf"))
    return torch.matmul(_softmax_lastdim(s), v)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in: int, head_size: int, context_length: int, dropout: float = 0.0, qkv_bias: bool = False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", ~torch.ones(context_length, context_length).triu(1).bool())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, T, _ = x.shape
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        s = torch.matmul(q, k.mT) / math.sqrt(q.shape[-1])
        s = s.masked_fill(self.mask[:T, :T].logical_not(), float("-inf"))
        w = F.dropout(_softmax_lastdim(s), p=self.dropout.p, training=self.training)
        return torch.matmul(w, v)
