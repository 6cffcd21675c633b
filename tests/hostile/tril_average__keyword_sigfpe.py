"""Hostile: computes the honest answer, then appends to the worker's recorder (found on the call stack) a node
that passes its tensors by keyword, aten.div.Tensor_mode(self=INT64_MIN, other=-1, rounding_mode="trunc"): the
judge's guard read the dividend by position only, so the replay ran torch's CPU kernel on it, whose SIGFPE ended
the judge and with it the whole grading run. Keyword arguments that the op's schema does not mark keyword-only
are refused now: the graph is unverifiable, and the run goes on.

expect-fail: matmul: the number of tensor operations does not grow
"""
import sys
import torch

_A = torch.tensor([-2**63] * 8, dtype=torch.int64)
_B = torch.tensor([-1] * 8, dtype=torch.int64)


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
        a, b = rec.arg(_A), rec.arg(_B)
        rec.add({"op": "call", "target": "aten.div.Tensor_mode", "args": [],
                 "kwargs": {"self": a, "other": b, "rounding_mode": "trunc"}})
    return out
