"""Hostile (judge CPU): honest answers, but every recorded call's graph (the executor's capture_graph, replaced
in the worker's executor module) ends with an einsum nothing uses: 4,096 operands "ab,ab,...->" of one (2048, 2048)
tensor. Each index size, multiplied, stays within the einsum bound (4M), but the operands are contracted one after
the other: 1.7e10 multiplications in one op (12 CPU s), the last, so no deadline checked before the next op stops it.

The replay bounds an einsum's work by its index sizes times its operands: the recorded graph is unverified, and
the check that needs it (the operation count) fails.

expect-fail: the number of tensor operations
"""

import sys

import torch

X = 2048
_executor = sys.modules.get("runtime.executor")
_real = getattr(_executor, "capture_graph", None)


def _padded(fn, tensors, args, kwargs, encode):
    graph = _real(fn, tensors, args, kwargs, encode)
    if "nodes" in graph:
        nodes, n = graph["nodes"], len(graph["nodes"])
        nodes.append({"op": "call", "target": "aten.ones.default", "args": [{"list": [X, X]}], "kwargs": {}})
        equation = ",".join(["ab"] * 4096) + "->"
        nodes.append(
            {"op": "call", "target": "aten.einsum.default", "args": [equation, {"list": [{"ref": n}] * 4096}]}
        )
        nodes[-1]["kwargs"] = {}
    return graph


if _real is not None:
    _executor.capture_graph = _padded


def causal_mean_weights(T, *, device=None, dtype=None):
    tril = torch.ones(T, T, device=device, dtype=dtype).tril()
    return tril / tril.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    return causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype) @ x
