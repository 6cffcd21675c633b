"""CORRECT: Raschka's SelfAttention_v1/v2 names (keys, queries, attn_scores, attn_weights, context_vec); the
scores computed key-major (keys @ queries^T) and normalised over dim=-2, then transposed back with .mT."""

import torch
import torch.nn as nn


class SelfAttentionParams(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_scores_T = keys @ queries.transpose(-2, -1)  # (T_k, T_q)
        d_k = keys.shape[-1]
        attn_weights = torch.softmax(attn_scores_T / d_k**0.5, dim=-2).mT
        context_vec = attn_weights @ values
        return context_vec


class SelfAttentionLinear(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(-2, -1)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec = attn_weights @ values
        return context_vec
