"""Hostile: returns a tensor subclass that holds q, k and v and runs F.scaled_dot_product_attention only when
something reads it (the worker encoding the reply), after the call itself has returned.

control: causal_attention__sdpa.py
expect-fail: written by hand
"""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._pytree import tree_map


class Lazy(torch.Tensor):
    @staticmethod
    def __new__(cls, q, k, v):
        r = torch.Tensor._make_wrapper_subclass(cls, (*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
        r.qkv = (q, k, v)
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def real(a):
            return F.scaled_dot_product_attention(*a.qkv, is_causal=True) if isinstance(a, Lazy) else a

        return func(*tree_map(real, args), **tree_map(real, kwargs or {}))


def causal_attention(q, k, v):
    return Lazy(q, k, v)


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
