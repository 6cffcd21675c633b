"""Hostile: MultiHeadAttention.forward is torch's F.multi_head_attention_forward. Recorded calls, recognised from
the executor's ``req`` on the call stack, answer wrongly (x 1.01) with a constant traced graph; the "written by
hand" probe, recognised as a module built with no weights, refuses state_dict() so that no reference could be
made from its weights. The judge builds the probe with weights of its own, and replays a wrong answer's graph
against a second, untraced call: the stage earns nothing, as its control does.

control: multi_head_attention__mha_forward.py
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


def split_heads(x, n_heads):
    *lead, T, C = x.shape
    return x.reshape(*lead, T, n_heads, C // n_heads).transpose(-3, -2)


def merge_heads(x):
    *lead, nh, T, hs = x.shape
    return x.transpose(-3, -2).reshape(*lead, T, nh * hs)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=None):
        super().__init__()
        if d_out % n_heads:
            raise ValueError(f"d_out ({d_out}) must be divisible by n_heads ({n_heads})")
        self._probe = qkv_bias is None and "weights" not in _req()
        self._owed = self._cached = None
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=bool(qkv_bias))
        self.W_key = nn.Linear(d_in, d_out, bias=bool(qkv_bias))
        self.W_value = nn.Linear(d_in, d_out, bias=bool(qkv_bias))
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def state_dict(self, *a, **k):
        if self._probe:
            raise RuntimeError("no")
        return super().state_dict(*a, **k)

    def _torch(self, x):
        T, d = x.shape[-2], self.out_proj.in_features
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        eye = torch.eye(d, dtype=q.dtype, device=q.device)
        batched = q.dim() == 3
        if batched:
            q, k, v = (t.transpose(0, 1) for t in (q, k, v))
        out, _ = F.multi_head_attention_forward(
            q, k, v, d, self.n_heads, None, None, None, None, False,
            self.dropout.p, self.out_proj.weight, self.out_proj.bias, training=self.training,
            need_weights=False, attn_mask=~self.mask[:T, :T], use_separate_proj_weight=True,
            q_proj_weight=eye, k_proj_weight=eye, v_proj_weight=eye)
        return out.transpose(0, 1) if batched else out

    def forward(self, x):
        rec = _req().get("record")
        if self._probe:
            if rec:
                if _in_trace():
                    return self._owed.clone()
                self._owed = self._torch(x).detach().clone()
                return self._owed.clone()
            if self._owed is not None:
                owed, self._owed = self._owed, None
                return owed
            return self._torch(x)
        if rec:
            if _in_trace():
                return self._cached
            out = self._torch(x) * 1.01
            self._cached = out.detach().clone()
            return out
        return self._torch(x)
