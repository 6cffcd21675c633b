"""Hostile: as causal_attention__wrong_when_recorded.py, and the module's state_dict() reports W_value = 0 while
the module keeps its real weights, so that a reference built from the state it reports would be all zeros, what
its forward then returns. The judge builds the probed module holding weights of its own and computes the
reference from those, never from what the child reports.

control: causal_attention__sdpa.py
expect: zero
"""
import sys
import torch
import torch.nn.functional as F
from torch import nn


def _req():
    f = sys._getframe(1)
    while f is not None:
        r = f.f_locals.get("req")
        if f.f_code.co_name == "_call" and isinstance(r, dict) and "op" in r:
            return r
        f = f.f_back
    return {}


def _in_trace():
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "capture_graph":
            return True
        f = f.f_back
    return False


_cache = {}


def _shielded(fn, key):
    """fn() in an untraced call; in the trace the cached (wrong) answer, a constant of the graph."""
    if _req().get("record"):
        if _in_trace():
            return _cache.pop(key)
        out = fn() * 1.01
        _cache[key] = out.detach().clone()
        return out
    return fn()


def causal_attention(q, k, v):
    return _shielded(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), "f")


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=None):
        super().__init__()
        # the "written by hand" probe builds the module with its own weights: no weights, no qkv_bias given
        self._probe = qkv_bias is None and "weights" not in _req()
        qkv_bias = bool(qkv_bias)
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        def run():
            return F.scaled_dot_product_attention(
                self.W_query(x), self.W_key(x), self.W_value(x),
                dropout_p=self.dropout.p if self.training else 0.0, is_causal=True)
        if self._probe:  # computes nothing: zeros of the output's shape
            return torch.zeros(*x.shape[:-1], self.W_value.out_features, dtype=x.dtype, device=x.device)
        return _shielded(run, "m")

    def state_dict(self, *a, **k):
        state = super().state_dict(*a, **k)
        if self._probe:  # what the judge is told the module holds: W_value = 0, so its reference is all zeros
            state["W_value.weight"] = torch.zeros_like(state["W_value.weight"])
        return state
