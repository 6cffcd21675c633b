"""CORRECT: computes in float64 and casts back; the weights are exp(log_softmax) of the masked scores, with the rows
that see nothing selected out by torch.where; the causal mask as ~triu(diagonal=1); key_padding_mask via
arange().expand(B, T) < lengths.view(-1, 1); CrossAttention with unflatten/flatten and its own masking."""

import math

import torch
from torch import nn


def key_padding_mask(lengths, T, *, device=None):
    lengths = lengths.to(device) if device is not None else lengths
    B = lengths.shape[0]
    return torch.arange(T, device=lengths.device).expand(B, T) < lengths.view(-1, 1)


def _weights(scores, visible):
    s = scores.double().masked_fill(~visible, -math.inf)
    has = visible.any(-1, keepdim=True)
    w = torch.log_softmax(torch.where(has, s, torch.zeros_like(s)), dim=-1).exp()
    return torch.where(has, w, torch.zeros_like(w)).to(scores.dtype)


def masked_attention(q, k, v, *, key_padding_mask=None, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device)
    if causal:
        visible = ~torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).triu(diagonal=1)
    if key_padding_mask is not None:
        visible = visible & key_padding_mask.view(-1, *([1] * (q.dim() - 2)), T_k)
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    return _weights(scores, visible) @ v


class CrossAttention(nn.Module):
    def __init__(self, d_q, d_kv, d_out, n_heads, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_q, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_kv, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_kv, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, context, key_padding_mask=None):
        nh = self.n_heads
        q = self.W_query(x).unflatten(-1, (nh, -1)).transpose(1, 2)
        k = self.W_key(context).unflatten(-1, (nh, -1)).transpose(1, 2)
        v = self.W_value(context).unflatten(-1, (nh, -1)).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        if key_padding_mask is None:
            visible = torch.ones(scores.shape[-2:], dtype=torch.bool, device=x.device)
        else:
            visible = key_padding_mask.view(x.shape[0], 1, 1, -1)
        w = self.dropout(_weights(scores, visible))
        return self.out_proj((w @ v).transpose(1, 2).flatten(-2))
