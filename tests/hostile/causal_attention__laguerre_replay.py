"""Hostile (judge CPU, unbounded): honest values, but the graph every recorded call sends back is replaced (the
worker's executor.capture_graph, a module global learner code can assign) by three allowed ops:
    x = ones([1], float64); n = full([1], N, float64); special_laguerre_polynomial_l(x, n)
special_laguerre_polynomial_l is tagged `pointwise`, so the judge's replay runs it; its CPU kernel evaluates the
polynomial by a recurrence of n steps for each element (about 1.1 s per 1e8 steps here). One element, one op: the
replay's 2 s deadline is checked only between ops, and the judge has no wall clock of its own, so the judge's
process spins for N / 1e8 seconds (N = 1e15: about four months) inside the first replay.

The replay refuses the op before it runs (evidence._runnable, evidence._guard): the stage is unverified.

expect: zero
"""

import sys

import math

import torch
from torch import nn

N = 1e15  # steps of the recurrence: ~1e7 s (months) of the judge CPU in its first replay

_executor = sys.modules.get("runtime.executor")


def _spin(fn, tensors, args, kwargs, encode):
    n = len(tensors)
    nodes = [{"op": "input", "index": i} for i in range(n)]
    f64 = {"dtype": {"dtype": "float64"}}
    nodes.append({"op": "call", "target": "aten.ones.default", "args": [{"list": [1]}], "kwargs": f64})
    nodes.append({"op": "call", "target": "aten.full.default", "args": [{"list": [1]}, N], "kwargs": f64})
    nodes.append({"op": "call", "target": "aten.special_laguerre_polynomial_l.default",
                  "args": [{"ref": n}, {"ref": n + 1}], "kwargs": {}})
    return {"inputs": n, "nodes": nodes, "output": {"ref": n + 2}}


if _executor is not None:
    _executor.capture_graph = _spin


def causal_attention(q, k, v):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()
    scores = scores.masked_fill(~visible, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


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
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))
        return self.dropout(torch.softmax(scores, dim=-1)) @ v
