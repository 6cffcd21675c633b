"""Hostile: no attention written by hand: every call runs torch's own pattern function for
scaled_dot_product_attention (torch._inductor.fx_passes.fuse_attention._sfdp_pattern_5, ordinary ops, so the child
lives on), and the graph of every recorded call is replaced (the worker's capture_graph, through its module) by one
naming aten.acosh.int, an overload torch's Python lists but its dispatcher does not have. Looking it up raised
RuntimeError in the judge, not "unverifiable": each recorded check failed with "could not check this" and the stage
was not forfeited, so the checks that record nothing kept their points (6 of 15). Anything a graph makes the
judge's code raise is now unverifiable, and the stage forfeits.

control: causal_attention__sdpa.py
expect: zero
"""

import math
import sys

import torch
from torch import nn
from torch._inductor.fx_passes.fuse_attention import _sfdp_pattern_5 as _ATT

_executor = sys.modules.get("runtime.executor")  # the worker's executor module (the name it calls capture_graph by)


def _graph(fn, tensors, args, kwargs, encode):
    n = len(tensors)
    nodes = [{"op": "input", "index": i} for i in range(n)]
    nodes.append({"op": "call", "target": "aten.acosh.int", "args": [2], "kwargs": {}})
    return {"inputs": n, "nodes": nodes, "output": {"ref": 0}}


if _executor is not None:
    _executor.capture_graph = _graph


def causal_attention(q, k, v):
    T_q, T_k = q.shape[-2], k.shape[-2]
    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()
    bias = torch.zeros(T_q, T_k, dtype=q.dtype, device=q.device).masked_fill(~visible, float("-inf"))
    return _ATT(q, k, v, bias, math.sqrt(q.shape[-1]))


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        if x.shape[-2] > self.mask.shape[0]:
            raise ValueError("the sequence is longer than context_length")
        return causal_attention(self.W_query(x), self.W_key(x), self.W_value(x))
