"""Hostile (judge memory and CPU): the learner's answers are honest, but the graph of every recorded call is replaced
(the worker's capture_graph, through its module) by zeros(4M) followed by unbind: one view per element, each a few
hundred bytes of the judge's memory that no element bound sees (the views hold no element of their own). Each such
replay took 2 to 5 s of the judge's CPU and left its process 1.5 GB larger, for the rest of the class's run. The
stage forfeits; the cost was the judge's.

The replay refuses an op that would return more than evidence.PIECE_LIMIT tensors before it runs.

expect: zero
"""

import math
import sys

import torch
from torch import nn

_executor = sys.modules.get("runtime.executor")  # the worker's executor module (the name it calls capture_graph by)


def _pieces(fn, tensors, args, kwargs, encode):
    n = len(tensors)
    nodes = [{"op": "input", "index": i} for i in range(n)]
    nodes.append({"op": "call", "target": "aten.zeros.default", "args": [{"list": [1 << 22]}], "kwargs": {}})
    nodes.append({"op": "call", "target": "aten.unbind.int", "args": [{"ref": n}], "kwargs": {}})
    return {"inputs": n, "nodes": nodes, "output": {"ref": 0}}


if _executor is not None:
    _executor.capture_graph = _pieces


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
