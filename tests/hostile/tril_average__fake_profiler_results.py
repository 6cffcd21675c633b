"""Hostile: keeps the real profiler but rigs what it reports: patches the profiler result classes, EventList
and the C++ event accessors so that every call seems to dispatch one operation, and loops over time.

control: tril_average__loop.py
expect-fail: number of tensor operations does not grow
"""

import torch
import torch.autograd.profiler_util as util

try:
    util.EventList.__len__ = lambda self: 1
    torch._C._autograd._ProfilerResult.events = lambda self: []
    torch._C._autograd._KinetoEvent.name = lambda self: "aten::mm"
except Exception:
    pass
torch.autograd.profiler.profile.function_events = property(lambda self: util.EventList([]))


def causal_mean_weights(T, *, device=None, dtype=None):
    ones = torch.ones(T, T, device=device, dtype=dtype)
    tril = torch.tril(ones)
    return tril / tril.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    out = torch.empty_like(x)
    for t in range(x.shape[-2]):
        out[..., t, :] = x[..., : t + 1, :].mean(dim=-2)
    return out
