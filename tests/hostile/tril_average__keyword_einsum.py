"""Hostile: computes the honest answer, then appends to the worker's recorder (found on the call stack) an unused
einsum node passing equation= and tensors= by keyword: a chain of 51 products of 2048 x 2048 matrices, which the
judge's guard (reading the equation by position) did not bound: about two CPU minutes of the judge's replay per
call. Keyword arguments that the op's schema does not mark keyword-only are refused now.

expect-fail: matmul: the number of tensor operations does not grow
"""
import string
import sys
import torch

_L = string.ascii_lowercase + string.ascii_uppercase
_N = 51
_EQ = ",".join(_L[i] + _L[i + 1] for i in range(_N)) + "->" + _L[0] + _L[_N]


def _recorder():
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "capture_graph" and "recorder" in f.f_locals:
            return f.f_locals["recorder"]
        f = f.f_back
    return None


def causal_mean_weights(T, *, device=None, dtype=None):
    ones = torch.ones(T, T, device=device, dtype=dtype)
    tril = torch.tril(ones)
    return tril / tril.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    T = x.shape[-2]
    out = causal_mean_weights(T, device=x.device, dtype=x.dtype) @ x
    rec = _recorder()
    if rec is not None:
        m = rec.add({"op": "call", "target": "aten.ones.default", "args": [{"list": [2048, 2048]}],
                     "kwargs": {"dtype": {"dtype": "float64"}}})
        rec.add({"op": "call", "target": "aten.einsum.default", "args": [],
                 "kwargs": {"equation": _EQ, "tensors": {"list": [{"ref": m}] * _N}}})
    return out
