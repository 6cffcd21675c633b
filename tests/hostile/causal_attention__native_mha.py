"""Hostile: every answer comes from aten::_native_multi_head_attention (nn.MultiheadAttention's C++ fast path,
which never reaches scaled_dot_product_attention with need_weights=True); recorded calls answer wrongly with a
graph of a constant (a known stateful trick), so that no recorded call shows the kernel. The kernel must be
switched off in a stage written by hand, as scaled_dot_product_attention is.

control: causal_attention__sdpa.py
expect: zero
"""
import math, sys
import torch
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


def fused(q, k, v, keep):
    """softmax(q k^T / sqrt(hs), masked where keep is False) @ v, by the native MHA kernel."""
    hs, hv = q.shape[-1], v.shape[-1]
    E = max(hs, hv)
    lead = q.shape[:-2]
    Tq, Tk = q.shape[-2], k.shape[-2]
    q = q.reshape(-1, Tq, hs) * math.sqrt(E / hs)
    k = k.reshape(-1, Tk, hs)
    v = v.reshape(-1, Tk, hv)
    pad = lambda x: torch.cat([x, x.new_zeros(*x.shape[:-1], E - x.shape[-1])], -1) if x.shape[-1] < E else x
    q, k, v = pad(q), pad(k), pad(v)
    eye = torch.eye(E, dtype=q.dtype, device=q.device)
    W = eye.repeat(3, 1)
    b = q.new_zeros(3 * E)
    out, _ = torch._native_multi_head_attention(q, k, v, E, 1, W, b, eye, q.new_zeros(E), ~keep, True, True, 0)
    return out[..., :hv].reshape(*lead, Tq, hv)


_owed = {}


def _shield(fn, key):
    if _req().get("record"):
        if _in_trace():
            return _owed[key].clone()
        out = fn() * 1.01
        _owed[key] = out.detach().clone()
        return out
    if key in _owed:
        return _owed.pop(key)
    return fn()


def causal_attention(q, k, v):
    keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
    return _shield(lambda: fused(q, k, v, keep), "f")


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        T = x.shape[-2]
        if T > self.mask.shape[0]:
            raise ValueError("too long")
        def run():
            q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
            if self.training and self.dropout.p > 0:
                # dropout on weights: fall back to an ordinary path for this rarely checked case
                s = (q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])).masked_fill(~self.mask[:T, :T], float("-inf"))
                return self.dropout(torch.softmax(s, -1)) @ v
            return fused(q, k, v, self.mask[:T, :T])
        return _shield(run, ("m", id(self)))
