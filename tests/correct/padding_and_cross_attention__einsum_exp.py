"""CORRECT: einsum, the softmax written out (exp of the shifted scores times the visible mask, over a clamped sum),
finfo.min instead of -inf, heads split with unflatten and merged with flatten."""
import torch
from torch import nn


def key_padding_mask(lengths, T, *, device=None):
    lengths = torch.as_tensor(lengths, device=device)
    return torch.arange(T, device=lengths.device).unsqueeze(0) < lengths.unsqueeze(-1)


def _weights(q, k, key_padding_mask=None, causal=False):
    scores = torch.einsum("...qd,...kd->...qk", q * q.shape[-1] ** -0.5, k)
    T_q, T_k = scores.shape[-2:]
    rows = torch.arange(T_q, device=q.device).unsqueeze(-1)
    cols = torch.arange(T_k, device=q.device)
    visible = cols <= rows if causal else torch.ones(T_q, T_k, dtype=torch.bool, device=q.device)
    if key_padding_mask is not None:
        visible = visible & key_padding_mask.view(key_padding_mask.shape[0], *[1] * (q.dim() - 3), 1, T_k)
    scores = torch.where(visible, scores, torch.finfo(scores.dtype).min)
    e = torch.exp(scores - scores.amax(-1, keepdim=True)) * visible
    return e / e.sum(-1, keepdim=True).clamp_min(torch.finfo(e.dtype).tiny)


def masked_attention(q, k, v, *, key_padding_mask=None, causal=False):
    return torch.einsum("...qk,...kv->...qv", _weights(q, k, key_padding_mask, causal), v)


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
        def heads(t):
            return t.unflatten(-1, (self.n_heads, -1)).transpose(1, 2)

        q, k, v = heads(self.W_query(x)), heads(self.W_key(context)), heads(self.W_value(context))
        weights = self.dropout(_weights(q, k, key_padding_mask))
        return self.out_proj(torch.einsum("bhqk,bhkd->bhqd", weights, v).transpose(1, 2).flatten(-2))
