"""Hostile: disarms the recorder at import (replaces torch.autograd.profiler.profile, TorchFunctionMode and
torch.overrides.handle_torch_function, stops any running profiler), then calls F.scaled_dot_product_attention.

control: causal_attention__sdpa.py
expect-fail: written by hand
expect-fail: causal_attention: equals scaled_dot_product_attention
"""

import torch
import torch.autograd.profiler
import torch.nn.functional as F
import torch.overrides
from torch import nn


class _Nothing:
    function_events = []

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


torch.autograd.profiler.profile = _Nothing
torch.profiler.profile = _Nothing
torch.overrides.TorchFunctionMode = _Nothing
torch.overrides.handle_torch_function = lambda func, relevant, *args, **kwargs: func(*args, **kwargs)


def _stop_profiler():
    for stop in (getattr(torch.autograd, "_disable_profiler", None),
                 getattr(torch._C._autograd, "_disable_profiler", None)):
        try:
            stop()
        except Exception:
            pass


def causal_attention(q, k, v):
    _stop_profiler()
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
