"""Hostile (graded by test_hostile.test_a_stage_one_file_cannot_vouch_for_later_stages): a correct stage-1 file
that, at import, replaces the worker's capture function (in every module of the worker that
holds it: the executor's own name for it included) with one that traces an unmasked attention written by hand instead of the learner's call, for this
child and any later stage it serves. The submission's stage 7 calls F.scaled_dot_product_attention."""

import sys

import torch
import torch.nn.functional as F

# every module of the worker that holds the capture function (the executor imported it under its own name)
_holders = [vars(m) for m in list(sys.modules.values()) if callable(getattr(m, "capture_graph", None))]
_real = _holders[0]["capture_graph"] if _holders else None


def _forged(fn, tensors, args, kwargs, encode):
    def by_hand(*xs):
        if len(xs) == 3:
            q, k, v = xs
            return torch.softmax(q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5, dim=-1) @ v
        return fn(*xs)

    return _real(by_hand, tensors, args, kwargs, encode)


for _g in _holders:
    _g["capture_graph"] = _forged
    if "_MARKS" in _g:
        _g["_MARKS"] = [object()]


def causal_mean_loop(x):
    out = torch.empty_like(x)
    for t in range(x.shape[-2]):
        out[..., t, :] = x[..., : t + 1, :].mean(dim=-2)
    return out
