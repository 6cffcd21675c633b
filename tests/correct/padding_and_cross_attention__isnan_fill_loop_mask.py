"""CORRECT: key_padding_mask filled row by row in a Python loop (mask[b, :n] = True); masked_attention builds the
causal part as arange(T_q)[:, None] >= arange(T_k), masks with -inf and replaces the NaN weights of the rows that
see nothing with masked_fill(weights.isnan(), 0); CrossAttention folds the heads into the batch and uses bmm."""

import math

import torch
from torch import nn


def key_padding_mask(lengths, T, *, device=None):
    if device is None:
        device = lengths.device
    mask = torch.zeros(len(lengths), T, dtype=torch.bool, device=device)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def masked_attention(q, k, v, *, key_padding_mask=None, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        future = torch.arange(T_q, device=q.device)[:, None] < torch.arange(T_k, device=q.device)[None, :]
        scores = scores.masked_fill(future, float("-inf"))
    if key_padding_mask is not None:
        shape = (q.shape[0],) + (1,) * (q.dim() - 2) + (T_k,)
        scores = scores.masked_fill(~key_padding_mask.reshape(shape), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = weights.masked_fill(weights.isnan(), 0.0)
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

    def _fold(self, t):
        B, T, C = t.shape
        nh = self.n_heads
        return t.reshape(B, T, nh, C // nh).permute(0, 2, 1, 3).reshape(B * nh, T, C // nh)

    def forward(self, x, context, key_padding_mask=None):
        B, T_q, C = x.shape[0], x.shape[1], self.out_proj.in_features
        nh = self.n_heads
        q, k, v = self._fold(self.W_query(x)), self._fold(self.W_key(context)), self._fold(self.W_value(context))
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])  # (B*nh, T_q, T_k)
        if key_padding_mask is not None:
            hidden = ~key_padding_mask.repeat_interleave(nh, dim=0)[:, None, :]  # (B*nh, 1, T_k)
            scores = scores.masked_fill(hidden, float("-inf"))
        w = torch.softmax(scores, dim=-1)
        w = w.masked_fill(w.isnan(), 0.0)
        out = torch.bmm(self.dropout(w), v)  # (B*nh, T_q, hs)
        out = out.reshape(B, nh, T_q, -1).permute(0, 2, 1, 3).reshape(B, T_q, C)
        return self.out_proj(out)
