"""split with view on the last dim + movedim; merge with movedim + flatten; the module folds B*nh for bmm; the
buffer from tril(ones).bool(); ValueError via divmod; the output projection called through F.linear on its parameters."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    *lead, T, C = x.shape
    return x.view(*lead, T, n_heads, C // n_heads).movedim(-2, -3)


def merge_heads(x):
    return x.movedim(-3, -2).flatten(-2)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        hs, rem = divmod(d_out, n_heads)
        if rem:
            raise ValueError(f"n_heads={n_heads} does not divide d_out={d_out}")
        self.n_heads, self.hs = n_heads, hs
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)).bool())

    def forward(self, x):
        B, T, _ = x.shape
        nh, hs = self.n_heads, self.hs
        q = split_heads(self.W_query(x), nh).reshape(B * nh, T, hs)
        k = split_heads(self.W_key(x), nh).reshape(B * nh, T, hs)
        v = split_heads(self.W_value(x), nh).reshape(B * nh, T, hs)
        s = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(hs)
        s = s.masked_fill(~self.mask[:T, :T], float("-inf"))
        w = self.dropout(torch.softmax(s, dim=-1))
        out = torch.bmm(w, v).view(B, nh, T, hs)
        return F.linear(merge_heads(out), self.out_proj.weight, self.out_proj.bias)
