"""Hostile: calls PyTorch's fused attention through torch.ops.aten, the dispatcher's own name for it, in causal_attention and in the module.

control: causal_attention__sdpa.py
expect-fail: written by hand
expect-fail: causal_attention: equals scaled_dot_product_attention
"""

import torch
from torch import nn


def causal_attention(q, k, v):
    return torch.ops.aten.scaled_dot_product_attention(q, k, v, is_causal=True)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        return causal_attention(self.W_query(x), self.W_key(x), self.W_value(x))
