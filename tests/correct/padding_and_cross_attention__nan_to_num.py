"""masked_attention: scores masked with -inf, softmax, then torch.nan_to_num(nan=0.0) for the rows with no visible key
(masked_fill's backward zeroes the gradient of every masked score, so gradients stay finite); lengths compared with
unsqueeze(-1) > arange; CrossAttention masks with key_padding_mask[:, None, None, :] and nan_to_num too."""
import math

import torch
from torch import nn


def key_padding_mask(lengths, T, *, device=None):
    if device is None:
        device = lengths.device
    lengths = lengths.to(device)
    return lengths.unsqueeze(-1) > torch.arange(T, device=device)


def masked_attention(q, k, v, *, key_padding_mask=None, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    hidden = torch.zeros(T_q, T_k, dtype=torch.bool, device=q.device)
    if causal:
        hidden = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).triu(1)
    if key_padding_mask is not None:
        pad = ~key_padding_mask.view(key_padding_mask.shape[0], *([1] * (q.dim() - 2)), T_k)
        hidden = hidden | pad
    weights = torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ v


class CrossAttention(nn.Module):
    def __init__(self, d_q, d_kv, d_out, n_heads, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_q, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_kv, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_kv, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)

    def _heads(self, t):
        B, T, D = t.shape
        return t.reshape(B, T, self.n_heads, D // self.n_heads).permute(0, 2, 1, 3)

    def forward(self, x, context, key_padding_mask=None):
        B, T_q, _ = x.shape
        q = self._heads(self.W_query(x))
        k = self._heads(self.W_key(context))
        v = self._heads(self.W_value(context))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if key_padding_mask is not None:
            scores = scores.masked_fill(~key_padding_mask[:, None, None, :], float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        out = self.dropout(weights) @ v
        return self.out_proj(out.permute(0, 2, 1, 3).reshape(B, T_q, -1))
