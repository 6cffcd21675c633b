"""Hostile (judge CPU): the learner's answers are honest, but the graph of every recorded call is replaced (the
worker's capture_graph, reached through __globals__ of the function the worker wrapped) by a graph of two allowed
ops: ones(X, M, float16), ones(M, X, float16), mm. Each input stays within ELEMENT_LIMIT, and torch's CPU float16
matrix product is about 250 times slower than float32's, so that one op takes the judge's CPU for a long time
before the replay's 2 s deadline (checked between ops) or the element bound (checked after the op) can stop it.
The stage forfeits; the cost is the judge's: one such op per recorded call.

The replay refuses the op before it runs (evidence._runnable, evidence._guard): the stage is unverified.

expect: zero
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

X, M = 2048, 2048  # the mm: 2048 x 2048 @ 2048 x 2048 in float16: inputs and output within ELEMENT_LIMIT (4M)

import sys

_executor = sys.modules.get("runtime.executor")  # the worker's executor module (the name it calls capture_graph by)


def _slow(fn, tensors, args, kwargs, encode):
    n = len(tensors)
    nodes = [{"op": "input", "index": i} for i in range(n)]
    f16 = {"dtype": {"dtype": "float16"}}
    nodes.append({"op": "call", "target": "aten.ones.default", "args": [{"list": [X, M]}], "kwargs": f16})
    nodes.append({"op": "call", "target": "aten.ones.default", "args": [{"list": [M, X]}], "kwargs": f16})
    nodes.append({"op": "call", "target": "aten.mm.default", "args": [{"ref": n}, {"ref": n + 1}], "kwargs": {}})
    return {"inputs": n, "nodes": nodes, "output": {"ref": n + 2}}


if _executor is not None:
    _executor.capture_graph = _slow


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
