"""Hostile (judge CPU): honest answers, but every recorded call's graph (the executor's capture_graph, replaced
in the worker's executor module) ends with nodes nothing uses: two (2048, 2048) float16 tensors and a `linear`
of them. `linear` is made of a matrix product (8.6e9 multiply-adds in float16, 43 CPU s on the judge); as the last
op, no deadline checked before the next op would stop it, and dead, it changes no count or memory figure.

The replay bounds linear's work as a matrix product's (evidence._matrix_product_work): the stage is unverified.

expect: zero
"""

import math
import sys

import torch
from torch import nn

X = 2048
_executor = sys.modules.get("runtime.executor")  # the worker's executor module (the name it calls capture_graph by)
_real = getattr(_executor, "capture_graph", None)


def _padded(fn, tensors, args, kwargs, encode):
    graph = _real(fn, tensors, args, kwargs, encode)
    if "nodes" in graph:
        nodes, n = graph["nodes"], len(graph["nodes"])
        f16 = {"dtype": {"dtype": "float16"}}
        nodes.append({"op": "call", "target": "aten.ones.default", "args": [{"list": [X, X]}], "kwargs": f16})
        nodes.append({"op": "call", "target": "aten.ones.default", "args": [{"list": [X, X]}], "kwargs": f16})
        nodes.append({"op": "call", "target": "aten.t.default", "args": [{"ref": n + 1}], "kwargs": {}})
        nodes.append(
            {"op": "call", "target": "aten.linear.default", "args": [{"ref": n}, {"ref": n + 2}], "kwargs": {}}
        )
    return graph


if _real is not None:
    _executor.capture_graph = _padded


def causal_attention(q, k, v):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()
    return torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1) @ v


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
