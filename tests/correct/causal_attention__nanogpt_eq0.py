"""CORRECT: nanoGPT's forward: att = (q @ k^T) * (1.0 / math.sqrt(k.size(-1))), att.masked_fill(mask[:T, :T] == 0,
float('-inf')), F.softmax, self.dropout(att), y = att @ v; causal_attention masks with a float tril of ones == 0."""

import math

import torch
import torch.nn as nn
from torch.nn import functional as F


def causal_attention(q, k, v):
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    tril = torch.tril(torch.ones(q.size(-2), k.size(-2), device=q.device))
    att = att.masked_fill(tril == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    return att @ v


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)).bool())

    def forward(self, x):
        B, T, C = x.size()
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.dropout(att)
        y = att @ v
        return y
