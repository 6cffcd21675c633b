"""Hostile: replaces the worker's capture function (found through ``__globals__`` of a function the worker
wrapped) with one that traces something else: attention written by hand but without the mask for the first
call, a constant (the answer computed by F.scaled_dot_product_attention) afterwards. The answers themselves
come from F.scaled_dot_product_attention.

control: causal_attention__sdpa.py
expect-fail: written by hand
"""

import sys

import torch
import torch.nn.functional as F
from torch import nn

# every module of the worker that holds the capture function (the executor imported it under its own name)
_holders = [vars(m) for m in list(sys.modules.values()) if callable(getattr(m, "capture_graph", None))]
_real = _holders[0]["capture_graph"] if _holders else None
_calls = []


def _unmasked(q, k, v):
    return torch.softmax(q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5, dim=-1) @ v


def _forged(fn, tensors, args, kwargs, encode):
    if not (getattr(fn, "__name__", "") == "causal_attention" or type(fn).__name__ == "CausalSelfAttention"):
        return _real(fn, tensors, args, kwargs, encode)  # this stage's calls only (the child may serve the next)
    _calls.append(1)
    if len(_calls) % 2:
        return _real(lambda *a, **k: _unmasked(*tensors[:3]) if len(tensors) >= 3 else tensors[0] * 1.0,
                     tensors, args, kwargs, encode)
    answer = fn(*[t.clone() for t in tensors]) if len(tensors) >= 3 else None
    return _real(lambda *a, **k: answer.clone() if answer is not None else tensors[0] * 1.0,
                 tensors, args, kwargs, encode)


for _g in _holders:
    _g["capture_graph"] = _forged


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
