"""Hostile: walks the call stack (frames, locals, globals) and the garbage collector looking for the expected
output, and returns it if found. It computes the right answer only to recognise it: it never returns its own.

expect: zero
"""

import gc
import sys

import torch


def _answer(x):
    steps = torch.arange(1, x.shape[-2] + 1, dtype=torch.float64).unsqueeze(-1)
    return x.detach().double().cpu().cumsum(-2) / steps


def _tensors_in(value, depth=0):
    if isinstance(value, torch.Tensor):
        yield value
    elif depth < 3 and isinstance(value, dict):
        for v in list(value.values())[:200]:
            yield from _tensors_in(v, depth + 1)
    elif depth < 3 and isinstance(value, (list, tuple)):
        for v in list(value)[:200]:
            yield from _tensors_in(v, depth + 1)
    elif depth < 2 and hasattr(value, "__dict__"):
        try:
            yield from _tensors_in(vars(value), depth + 1)
        except TypeError:
            pass


def _candidates():
    frame = sys._getframe(1)
    while frame is not None:
        yield from _tensors_in(frame.f_locals)
        yield from _tensors_in(frame.f_globals)
        frame = frame.f_back
    try:
        for obj in gc.get_objects():
            if isinstance(obj, torch.Tensor):
                yield obj
    except RuntimeError:
        pass


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    mine = _answer(x)
    for t in _candidates():
        if t is mine or t is x or tuple(t.shape) != tuple(x.shape):
            continue
        try:
            if torch.allclose(t.detach().double().cpu(), mine) and not torch.allclose(t.detach().double().cpu(),
                                                                                        x.detach().double().cpu()):
                return t.detach().clone().to(x.dtype)  # an expected value was found in the sandbox
        except RuntimeError:
            continue
    x.mul_(2)
    return None
