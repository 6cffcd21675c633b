"""Hostile: a stateful function teamed with a forged graph. The worker's capture function (in every module of
the worker that holds it: the executor's own name for it included) is replaced by one that traces a constant: the answer
F.scaled_dot_product_attention gave on the traced inputs. The next call, which would be the judge's call with
fresh inputs, returns that same constant, so the forged graph "reproduces" the learner's answer on them too.
The judge replays the graph on fresh inputs the child never sees and compares with its own reference.

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
_owed = []  # the constant the forged graph returns, owed to the next call


def _forged(fn, tensors, args, kwargs, encode):
    answer = fn(*[t.clone() for t in tensors])
    _owed[:] = [answer.clone()]
    return _real(lambda *a, **k: answer.clone(), tensors, args, kwargs, encode)


for _g in _holders:
    _g["capture_graph"] = _forged


def causal_attention(q, k, v):
    if _owed and _owed[0].shape[:-1] == q.shape[:-1]:
        return _owed.pop()
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
