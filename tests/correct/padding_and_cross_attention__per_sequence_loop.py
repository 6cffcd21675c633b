"""CORRECT: masked_attention loops over the sequences of the batch and, for each, keeps only its real keys and
values (boolean indexing with its mask row), adds the causal mask from the kept keys' absolute positions, and
gives zeros to a query with nothing to see; CrossAttention as the solution."""
import math

import torch
from torch import nn


def key_padding_mask(lengths, T, *, device=None):
    lengths = torch.as_tensor(lengths, device=device)
    return torch.arange(T, device=lengths.device) < lengths[:, None]


def masked_attention(q, k, v, *, key_padding_mask=None, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    outs = []
    for b in range(q.shape[0]):
        keep = torch.ones(T_k, dtype=torch.bool, device=q.device)
        if key_padding_mask is not None:
            keep = key_padding_mask[b]
        pos = torch.arange(T_k, device=q.device)[keep]  # absolute positions of the real keys
        kb, vb = k[b][..., keep, :], v[b][..., keep, :]
        scores = q[b] @ kb.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_q, n_real)
        visible = torch.ones(T_q, pos.shape[0], dtype=torch.bool, device=q.device)
        if causal:
            visible = pos[None, :] <= torch.arange(T_q, device=q.device)[:, None]
        has_key = visible.any(-1, keepdim=True)
        scores = scores.masked_fill(~visible, float("-inf")).masked_fill(~has_key, 0.0)
        weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
        outs.append(weights @ vb)
    return torch.stack(outs)


class CrossAttention(nn.Module):
    def __init__(self, d_q, d_kv, d_out, n_heads, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.n_heads = n_heads
        self.head_size = d_out // n_heads
        self.W_query = nn.Linear(d_q, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_kv, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_kv, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, context, key_padding_mask=None):
        B, T_q, _ = x.shape
        T_k = context.shape[1]
        nh, hs = self.n_heads, self.head_size
        q = self.W_query(x).view(B, T_q, nh, hs).transpose(1, 2)
        k = self.W_key(context).view(B, T_k, nh, hs).transpose(1, 2)
        v = self.W_value(context).view(B, T_k, nh, hs).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(hs)
        if key_padding_mask is not None:
            visible = key_padding_mask.reshape(B, 1, 1, T_k)
            has_key = visible.any(dim=-1, keepdim=True)
            scores = scores.masked_fill(~visible, float("-inf")).masked_fill(~has_key, 0.0)
            weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
        else:
            weights = torch.softmax(scores, dim=-1)
        out = self.dropout(weights) @ v
        return self.out_proj(out.transpose(1, 2).reshape(B, T_q, nh * hs))
