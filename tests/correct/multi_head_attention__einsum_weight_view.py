"""CORRECT: each projection straight into heads by einsum with its weight viewed as (nh, hs, d_in) (the bias as
(nh, 1, hs)), no split of the projected tensor; the output projection as an einsum of the merged heads with
out_proj.weight viewed (d_out, nh, hs); split_heads/merge_heads by einsum on an unflattened last dim."""

import math

import torch
from torch import nn


def split_heads(x, n_heads):
    return torch.einsum("...thd->...htd", x.unflatten(-1, (n_heads, x.shape[-1] // n_heads)))


def merge_heads(x):
    return torch.einsum("...htd->...thd", x).flatten(-2)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError(f"{n_heads} heads cannot share {d_out} features equally")
        self.nh, self.hs = n_heads, d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def _heads(self, layer, x):
        w = layer.weight.view(self.nh, self.hs, -1)
        out = torch.einsum("btd,hkd->bhtk", x, w)
        if layer.bias is not None:
            out = out + layer.bias.view(self.nh, 1, self.hs)
        return out

    def forward(self, x):
        T = x.shape[1]
        q, k, v = (self._heads(layer, x) for layer in (self.W_query, self.W_key, self.W_value))
        att = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.hs)
        att = att.masked_fill(~self.mask[:T, :T], float("-inf")).softmax(-1)
        ctx = torch.einsum("bhqk,bhkd->bhqd", self.dropout(att), v)  # (B, nh, T, hs)
        w_out = self.out_proj.weight.view(-1, self.nh, self.hs)
        return torch.einsum("bhtk,ohk->bto", ctx, w_out) + self.out_proj.bias
