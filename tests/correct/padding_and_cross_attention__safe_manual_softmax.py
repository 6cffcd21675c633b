"""A softmax written out that is safe for empty rows: the row max replaced by 0 where nothing is visible, exp of the
masked (-inf) scores, the denominator replaced by 1 where it is 0; einsum; the lengths mask via expand."""
import math

import torch
from torch import nn


def key_padding_mask(lengths: torch.Tensor, T: int, *, device=None) -> torch.Tensor:
    lengths = torch.as_tensor(lengths)
    dev = lengths.device if device is None else torch.device(device)
    B = lengths.shape[0]
    pos = torch.arange(T, device=dev).expand(B, T)
    return pos < lengths.to(dev).view(-1, 1)


def _safe_softmax(scores, visible):
    scores = scores.masked_fill(~visible, float("-inf"))
    any_visible = visible.any(dim=-1, keepdim=True)
    m = torch.where(any_visible, scores.amax(dim=-1, keepdim=True), torch.zeros_like(scores[..., :1]))
    e = torch.exp(scores - m)  # exactly 0 on hidden keys
    den = e.sum(dim=-1, keepdim=True)
    den = torch.where(den > 0, den, torch.ones_like(den))
    return e / den


def masked_attention(q, k, v, *, key_padding_mask=None, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scores = torch.einsum("...qd,...kd->...qk", q, k) * (1.0 / math.sqrt(q.shape[-1]))
    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device)
    if causal:
        visible = torch.tril(visible)
    if key_padding_mask is not None:
        kpm = key_padding_mask
        while kpm.dim() < q.dim() - 1:
            kpm = kpm.unsqueeze(1)
        visible = visible & kpm.unsqueeze(-2)
    visible = visible.expand(scores.shape)
    return torch.einsum("...qk,...kd->...qd", _safe_softmax(scores, visible), v)


class CrossAttention(nn.Module):
    def __init__(self, d_q: int, d_kv: int, d_out: int, n_heads: int, dropout: float = 0.0, qkv_bias: bool = False):
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
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
        if key_padding_mask is None:
            visible = torch.ones_like(scores, dtype=torch.bool)
        else:
            visible = key_padding_mask[:, None, None, :].expand(scores.shape)
        w = self.dropout(_safe_softmax(scores, visible))
        out = torch.einsum("bhqk,bhkd->bhqd", w, v)
        return self.out_proj(out.transpose(1, 2).flatten(-2))
