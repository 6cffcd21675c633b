"""Hostile: switches the dispatcher's Python modes and torch function handling off around the call with public
torch._C functions (what a trace or a recorder would see), calls F.scaled_dot_product_attention, and lets
them on again.

control: causal_attention__sdpa.py
expect-fail: written by hand
"""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import _disable_current_modes


def causal_attention(q, k, v):
    with _disable_current_modes(), torch._C._DisableTorchDispatch(), torch._C.DisableTorchFunction():
        for stop in (getattr(torch._C._autograd, "_disable_profiler", None),):
            try:
                stop()
            except Exception:
                pass
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
