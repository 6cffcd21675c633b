"""Hostile: computes the right values with a Python loop over time (which the op-count check exists to
catch), and tries to hide the loop from the recorder: replaces torch.autograd.profiler.profile with a fake
whose event list is empty, replaces TorchFunctionMode, and tries to pause the profiler's collection.

control: tril_average__loop.py
expect-fail: number of tensor operations does not grow
"""

import torch
import torch.autograd.profiler as profiler
import torch.overrides


class _FakeProfile:
    function_events = []

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


profiler.profile = _FakeProfile
torch.autograd.profiler.profile = _FakeProfile
torch.overrides.TorchFunctionMode = object


def _pause(on):
    try:
        from torch.autograd import ProfilerActivity, _toggle_collection_dynamic

        _toggle_collection_dynamic(on, {ProfilerActivity.CPU})
    except Exception:
        pass


def causal_mean_weights(T, *, device=None, dtype=None):
    ones = torch.ones(T, T, device=device, dtype=dtype)
    tril = torch.tril(ones)
    return tril / tril.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    _pause(False)
    out = torch.empty_like(x)
    for t in range(x.shape[-2]):
        out[..., t, :] = x[..., : t + 1, :].mean(dim=-2)
    _pause(True)
    return out
