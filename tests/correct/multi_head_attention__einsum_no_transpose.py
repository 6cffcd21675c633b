"""CORRECT: the heads kept in the (B, T, nh, hs) layout of a plain reshape, never transposed: einsum('bqhd,bkhd->bhqk')
for the scores and einsum('bhqk,bkhd->bqhd') for the weighted sum, then reshape(B, T, d_out); split_heads and
merge_heads by reshape + swapaxes."""

import math

import torch
from torch import nn


def split_heads(x, n_heads):
    return x.reshape(*x.shape[:-1], n_heads, x.shape[-1] // n_heads).swapaxes(-2, -3)


def merge_heads(x):
    y = x.swapaxes(-2, -3)
    return y.reshape(*y.shape[:-2], -1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError("n_heads must divide d_out")
        self.d_out, self.n_heads = d_out, n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).tril() > 0)

    def forward(self, x):
        B, T, _ = x.shape
        hs = self.d_out // self.n_heads
        q = self.W_query(x).reshape(B, T, self.n_heads, hs)
        k = self.W_key(x).reshape(B, T, self.n_heads, hs)
        v = self.W_value(x).reshape(B, T, self.n_heads, hs)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(hs)
        scores = scores.masked_fill(~self.mask[:T, :T], -math.inf)
        weights = self.dropout(torch.softmax(scores, dim=-1))
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v)
        return self.out_proj(out.reshape(B, T, self.d_out))
