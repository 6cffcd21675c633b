"""CORRECT: a softmax computed in at least float32 (torch.promote_types, softmax(dtype=...)), as mixed-precision code does."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def _softmax(s):
    # compute the softmax in at least float32, as mixed-precision code does
    acc = torch.promote_types(s.dtype, torch.float32)
    return F.softmax(s, dim=-1, dtype=acc).to(s.dtype)
def causal_attention(q, k, v):
    Tq, Tk = q.shape[-2], k.shape[-2]
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    keep = torch.tril(torch.ones(Tq, Tk, dtype=torch.bool, device=q.device))
    s = s.masked_fill(~keep, float("-inf"))
    return _softmax(s) @ v
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
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        s = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        s = s.masked_fill(~self.mask[:T, :T], float("-inf"))
        return self.dropout(_softmax(s)) @ v
