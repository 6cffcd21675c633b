"""CORRECT: key_padding_mask as lengths.unsqueeze(1) > arange; masked_attention fills hidden scores with
torch.where(visible, scores, finfo.min) and multiplies the weights by has_key afterwards; CrossAttention keeps the
heads as (B, T, nh, hs) and contracts them with einsum, never transposing."""

import math

import torch
from torch import nn


def key_padding_mask(lengths, T, *, device=None):
    lengths = torch.as_tensor(lengths)
    if device is not None:
        lengths = lengths.to(device)
    return lengths.unsqueeze(1) > torch.arange(T, device=lengths.device)


def _visible(T_q, T_k, mask, causal, extra, device):
    vis = torch.ones(T_q, T_k, dtype=torch.bool, device=device)
    if causal:
        vis = torch.tril(vis)
    if mask is not None:
        vis = vis & mask.view(mask.shape[0], *([1] * extra), 1, T_k)
    return vis


def masked_attention(q, k, v, *, key_padding_mask=None, causal=False):
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1))
    vis = _visible(q.size(-2), k.size(-2), key_padding_mask, causal, q.dim() - 3, q.device)
    neg = torch.finfo(scores.dtype).min
    scores = torch.where(vis, scores, torch.full_like(scores, neg))
    w = scores.softmax(dim=-1)
    w = w * vis.any(dim=-1, keepdim=True).to(w.dtype)
    return torch.matmul(w, v)


class CrossAttention(nn.Module):
    def __init__(self, d_q, d_kv, d_out, n_heads, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.nh = n_heads
        self.hs = d_out // n_heads
        self.W_query = nn.Linear(d_q, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_kv, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_kv, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, context, key_padding_mask=None):
        B, T_q, _ = x.shape
        T_k = context.shape[1]
        q = self.W_query(x).view(B, T_q, self.nh, self.hs)
        k = self.W_key(context).view(B, T_k, self.nh, self.hs)
        v = self.W_value(context).view(B, T_k, self.nh, self.hs)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.hs)
        if key_padding_mask is not None:
            vis = key_padding_mask[:, None, None, :]
            scores = torch.where(vis, scores, torch.full_like(scores, torch.finfo(scores.dtype).min))
            w = scores.softmax(-1) * vis.any(-1, keepdim=True).to(scores.dtype)
        else:
            w = scores.softmax(-1)
        out = torch.einsum("bhqk,bkhd->bqhd", self.dropout(w), v)
        return self.out_proj(out.reshape(B, T_q, self.nh * self.hs))
