"""Hostile: torch's own pattern function for scaled_dot_product_attention
(torch._inductor.fx_passes.fuse_attention._sfdp_pattern_5: softmax(q k^T / s + mask) @ v with ordinary ops), every
torch call of which goes through a TorchFunctionMode that recurses 250 frames before running it. The recorder
walked only 200 frames up the stack looking for torch's attention code; it now walks the whole stack.

control: causal_attention__sdpa.py
expect: zero
"""

import math

import torch
from torch import nn
from torch._inductor.fx_passes.fuse_attention import _sfdp_pattern_5 as _ATT
from torch.overrides import TorchFunctionMode


def _deep(n, func, args, kwargs):
    if n:
        return _deep(n - 1, func, args, kwargs)
    return func(*args, **kwargs)


class _Deep(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return _deep(250, func, args, kwargs or {})


def causal_attention(q, k, v):
    T_q, T_k = q.shape[-2], k.shape[-2]
    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()
    bias = torch.zeros(T_q, T_k, dtype=q.dtype, device=q.device).masked_fill(~visible, float("-inf"))
    with _Deep():
        return _ATT(q, k, v, bias, math.sqrt(q.shape[-1]))


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        if x.shape[-2] > self.mask.shape[0]:
            raise ValueError("the sequence is longer than context_length")
        return causal_attention(self.W_query(x), self.W_key(x), self.W_value(x))
