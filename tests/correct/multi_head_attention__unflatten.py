"""CORRECT: heads split with unflatten and merged with flatten; the scale applied to q; torch.where for the mask."""
import torch
from torch import nn


def split_heads(x, n_heads):
    return x.unflatten(-1, (n_heads, -1)).transpose(-3, -2)


def merge_heads(x):
    return x.transpose(-3, -2).flatten(-2)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads:
            raise ValueError(f"d_out={d_out} is not a multiple of n_heads={n_heads}")
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).tril().bool())

    def forward(self, x):
        T = x.shape[1]
        q, k, v = (split_heads(layer(x), self.n_heads) for layer in (self.W_query, self.W_key, self.W_value))
        q = q * q.shape[-1] ** -0.5
        scores = torch.where(self.mask[:T, :T], q @ k.transpose(-1, -2), float("-inf"))
        weights = self.dropout(scores.softmax(dim=-1))
        return self.out_proj(merge_heads(weights @ v))
