"""Hostile: reaches the worker's own module namespace through ``__globals__`` of a torch function the worker
wrapped (F.multi_head_attention_forward), empties every list of forbidden names it finds there, makes the
wrapper's mark a no-op, then calls F.scaled_dot_product_attention.

control: causal_attention__sdpa.py
expect-fail: written by hand
"""

import torch
import torch.nn.functional as F
from torch import nn

_g = getattr(F.multi_head_attention_forward, "__globals__", {})
for _name in list(_g):
    if "FORBIDDEN" in _name or _name in ("FORBIDDEN_WORDS", "MARK"):
        _g[_name] = ()
_g["mark_entry_points"] = lambda: None
_g["_MARKS"] = [object()]


def causal_attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        return causal_attention(self.W_query(x), self.W_key(x), self.W_value(x))
