"""CORRECT: nanoGPT's CausalSelfAttention forward on three projections: B, T, C = x.size(),
.view(B, T, n_head, hs).transpose(1, 2), att * (1.0 / math.sqrt(k.size(-1))), masked_fill(mask[:T, :T] == 0,
float('-inf')), F.softmax, self.dropout(att), y.transpose(1, 2).contiguous().view(B, T, d_out); split_heads with
reshape on shape[:-1], merge_heads with flatten(-2)."""

import math

import torch
import torch.nn as nn
from torch.nn import functional as F


def split_heads(x, n_heads):
    return x.reshape(x.shape[:-1] + (n_heads, x.shape[-1] // n_heads)).transpose(-2, -3)


def merge_heads(x):
    return x.transpose(-2, -3).flatten(-2)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads:
            raise ValueError(f"n_heads={n_heads} must divide d_out={d_out}")
        self.n_head = n_heads
        self.n_embd = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)).bool())

    def forward(self, x):
        B, T, _ = x.size()
        C = self.n_embd
        q = self.W_query(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.out_proj(y)
