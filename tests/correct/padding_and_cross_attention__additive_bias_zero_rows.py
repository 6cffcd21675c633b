"""An additive float bias (0 visible, -inf hidden) with the empty rows' bias set to 0 and their weights zeroed by
torch.where after the softmax; key_padding_mask via lt broadcasting; CrossAttention calls masked_attention with its
per-head tensors; dropout applied inside through a callable argument."""
import math

import torch
from torch import nn


def key_padding_mask(lengths, T, *, device=None):
    device = lengths.device if device is None else device
    return torch.arange(T, device=device).view(1, T).lt(lengths.to(device).view(-1, 1))


def _attend(q, k, v, visible, dropout=None):
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1))
    has_key = visible.any(dim=-1, keepdim=True)
    bias = torch.zeros(visible.shape, dtype=scores.dtype, device=scores.device)
    bias = bias.masked_fill(~visible & has_key, float("-inf"))
    weights = torch.softmax(scores + bias, dim=-1)
    weights = torch.where(has_key, weights, torch.zeros_like(weights))
    if dropout is not None:
        weights = dropout(weights)
    return torch.matmul(weights, v)


def _visible(q, k, key_padding_mask, causal):
    T_q, T_k = q.size(-2), k.size(-2)
    vis = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device)
    if causal:
        vis = vis.tril()
    if key_padding_mask is not None:
        shape = (key_padding_mask.size(0),) + (1,) * (q.dim() - 2) + (T_k,)
        vis = vis & key_padding_mask.reshape(shape)
    return vis


def masked_attention(q, k, v, *, key_padding_mask=None, causal=False):
    return _attend(q, k, v, _visible(q, k, key_padding_mask, causal))


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
        B, T_q, _ = x.shape
        T_k = context.shape[1]
        nh = self.n_heads
        q = self.W_query(x).view(B, T_q, nh, -1).transpose(1, 2)
        k = self.W_key(context).view(B, T_k, nh, -1).transpose(1, 2)
        v = self.W_value(context).view(B, T_k, nh, -1).transpose(1, 2)
        out = _attend(q, k, v, _visible(q, k, key_padding_mask, False), self.dropout)
        return self.out_proj(out.transpose(1, 2).contiguous().view(B, T_q, -1))
