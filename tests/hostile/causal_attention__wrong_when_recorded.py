"""Hostile: every value comes from F.scaled_dot_product_attention. The learner code reads the executor's own
request from the call stack (``req`` in Executor._call) to learn whether a call is recorded; a recorded call gets a
deliberately wrong answer (x 1.01) traced as a constant, and the unrecorded ones the true SDPA answer. A wrong
answer has no reference to be replayed against, so the judge replays the graph on fresh inputs and compares it
with a second, untraced call: the constant misses that call's answer, and the stage earns nothing, as its
control does.

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
        self._owed = None
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
        if self._probe:
            return self._forge(run)
        return _shielded(run, "m")

    def state_dict(self, *a, **k):
        if self._probe:  # the judge cannot read the weights, so its reference falls back to a second call
            raise RuntimeError("no")
        return super().state_dict(*a, **k)

    def _forge(self, run):
        if _req().get("record"):
            if _in_trace():
                return self._owed.clone()  # the graph: a constant
            self._owed = run().detach().clone()
            return self._owed.clone()
        if self._owed is not None:  # the judge's "fresh" call: answer with the constant
            owed, self._owed = self._owed, None
            return owed
        return run()
