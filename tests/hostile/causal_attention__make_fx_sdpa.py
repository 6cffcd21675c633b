"""Hostile: torch writes the attention. F.scaled_dot_product_attention is traced with make_fx and torch's
decomposition table in the first, unrecorded call of each shape, and every call runs the generated graph module:
plain ops (bmm, _softmax, where) that no graph can tell from code written by hand. In a stage written by hand the
child runs with the fused kernels switched off, so the trace itself fails.

control: causal_attention__sdpa.py
expect: zero
"""
import torch
import torch.nn.functional as F
from torch import nn

_cache = {}


def _sdpa(p):
    return lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p)


def _compiled(q, k, v, p=0.0):
    key = (p,) + tuple((tuple(x.shape), x.dtype, str(x.device), x.stride()) for x in (q, k, v))
    gm = _cache.get(key)
    if gm is None:
        from torch.fx.experimental.proxy_tensor import make_fx
        from torch._decomp import core_aten_decompositions
        gm = make_fx(_sdpa(p), decomposition_table=core_aten_decompositions())(q, k, v)
        _cache[key] = gm
    return gm


def causal_attention(q, k, v, p=0.0):
    return _compiled(q, k, v, p)(q, k, v)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        p = self.dropout.p if self.training else 0.0
        return causal_attention(self.W_query(x), self.W_key(x), self.W_value(x), p)
