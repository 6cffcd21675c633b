"""Hostile: the module built for "written by hand" (told apart by its arguments) refuses the judge's weights with an
extra parameter, so that the judge falls back to the weights it reads back from the module, and those are NaN; its
forward then returns NaN from a graph that computes nothing (zeros / 0): a reference of NaN, matched by any NaN.
Every other module computes honestly by hand, so only the "written by hand" credit is at stake.

expect-fail: CausalSelfAttention written by hand
"""

import math
import sys

import torch
from torch import nn


def _request():
    f = sys._getframe(1)
    while f is not None:
        r = f.f_locals.get("req")
        if f.f_code.co_name == "_call" and isinstance(r, dict) and "op" in r:
            return r
        f = f.f_back
    return {}


def causal_attention(q, k, v):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
    keep = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()
    return torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1) @ v


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=None):
        super().__init__()
        probe = qkv_bias is None  # the "written by hand" module is built without qkv_bias
        self.W_query = nn.Linear(d_in, head_size, bias=bool(qkv_bias))
        self.W_key = nn.Linear(d_in, head_size, bias=bool(qkv_bias))
        self.W_value = nn.Linear(d_in, head_size, bias=bool(qkv_bias))
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())
        self.nan = probe and "weights" not in _request()
        if probe and not self.nan:
            self.junk = nn.Parameter(torch.zeros(1))  # the judge's weights do not fit: it reads ours instead
        if self.nan:
            with torch.no_grad():
                for p in self.parameters():
                    p.fill_(float("nan"))

    def forward(self, x):
        if self.nan:
            return x.new_zeros(*x.shape[:-1], self.W_value.out_features) / 0
        T = x.shape[-2]
        scores = self.W_query(x) @ self.W_key(x).transpose(-2, -1) / math.sqrt(self.W_key.out_features)
        weights = torch.softmax(scores.masked_fill(~self.mask[:T, :T], float("-inf")), dim=-1)
        return self.dropout(weights) @ self.W_value(x)
