"""CORRECT: masked_attention takes the lengths mask in one go (visible = causal & mask[:, None, :] for 3-D inputs,
unsqueezed once more per extra dim with a while loop), hides with masked_fill(finfo.min) and multiplies by the
visible mask after the softmax (which zeroes an empty row); CrossAttention writes its own weights with the same
helper so it can apply dropout; key_padding_mask via torch.arange(T)[None] < lengths[:, None] on the given device."""

import math

import torch
from torch import nn


def key_padding_mask(lengths, T, *, device=None):
    device = device or lengths.device
    return torch.arange(T, device=device)[None] < lengths.to(device)[:, None]


def _visible(q, T_k, key_padding_mask, causal):
    T_q = q.shape[-2]
    vis = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device)
    if causal:
        vis = torch.tril(vis)
    if key_padding_mask is not None:
        m = key_padding_mask[:, None, :]
        while m.dim() < q.dim():
            m = m.unsqueeze(1)
        vis = vis & m
    return vis


def _weights(scores, vis):
    w = torch.softmax(scores.masked_fill(~vis, torch.finfo(scores.dtype).min), dim=-1)
    return w * vis


def masked_attention(q, k, v, *, key_padding_mask=None, causal=False):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _weights(scores, _visible(q, k.shape[-2], key_padding_mask, causal)) @ v


class CrossAttention(nn.Module):
    def __init__(self, d_q, d_kv, d_out, n_heads, dropout=0.0, qkv_bias=False):
        super().__init__()
        assert d_out % n_heads == 0
        self.n_heads, self.d_out = n_heads, d_out
        self.W_query = nn.Linear(d_q, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_kv, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_kv, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, context, key_padding_mask=None):
        B, T_q, _ = x.shape
        hs = self.d_out // self.n_heads
        q = self.W_query(x).reshape(B, T_q, self.n_heads, hs).permute(0, 2, 1, 3)
        k = self.W_key(context).reshape(B, -1, self.n_heads, hs).permute(0, 2, 1, 3)
        v = self.W_value(context).reshape(B, -1, self.n_heads, hs).permute(0, 2, 1, 3)
        scores = q @ k.transpose(-2, -1) / math.sqrt(hs)
        w = _weights(scores, _visible(q, k.shape[-2], key_padding_mask, False))
        out = self.dropout(w) @ v
        return self.out_proj(out.permute(0, 2, 1, 3).reshape(B, T_q, self.d_out))
