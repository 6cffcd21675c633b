"""CORRECT: an additive bias torch.full((T_q, T_k), -inf).triu(1) (0 on and below the diagonal) in the scores' dtype
and device, as nn.Transformer's generate_square_subsequent_mask; the module keeps an nn.Softmax(dim=-1) sub-module,
applies the scale to q before the product and drops with F.dropout(p, training=self.training)."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def _future_bias(T_q, T_k, like):
    return torch.full((T_q, T_k), float("-inf"), dtype=like.dtype, device=like.device).triu(1)


def causal_attention(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores + _future_bias(q.shape[-2], k.shape[-2], scores)
    return torch.softmax(scores, dim=-1) @ v


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.softmax = nn.Softmax(dim=-1)
        self.scale = head_size**-0.5
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        T = x.shape[1]
        q = self.W_query(x) * self.scale
        k, v = self.W_key(x), self.W_value(x)
        scores = torch.matmul(q, k.transpose(1, 2))
        scores = scores.masked_fill(self.mask[:T, :T].logical_not(), float("-inf"))
        weights = F.dropout(self.softmax(scores), p=self.dropout.p, training=self.training)
        return torch.matmul(weights, v)
