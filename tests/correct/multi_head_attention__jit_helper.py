"""CORRECT: the masking and softmax in a torch.jit.script helper (TorchScript is traced like any other code);
heads split with view on the last dim + transpose, merged with transpose + reshape."""
import math

import torch
from torch import nn


@torch.jit.script
def masked_softmax(scores: torch.Tensor, visible: torch.Tensor) -> torch.Tensor:
    return torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)


def split_heads(x, n_heads):
    return x.view(x.shape[:-1] + (n_heads, x.shape[-1] // n_heads)).transpose(-3, -2)


def merge_heads(x):
    nh, T, hs = x.shape[-3:]
    return x.transpose(-3, -2).reshape(x.shape[:-3] + (T, nh * hs))


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be a multiple of n_heads ({n_heads})")
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        T = x.size(1)
        q = split_heads(self.W_query(x), self.n_heads)
        k = split_heads(self.W_key(x), self.n_heads)
        v = split_heads(self.W_value(x), self.n_heads)
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), self.mask[:T, :T])
        return self.out_proj(merge_heads(self.dropout(w) @ v))
