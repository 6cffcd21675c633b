"""Hostile: replaces builtins the grading code might use (isinstance, abs, max, len, all, any, round, float).

expect: zero
"""

import builtins

import torch

_real_len = builtins.len
builtins.isinstance = lambda obj, cls: True
builtins.all = lambda iterable: True
builtins.any = lambda iterable: False
builtins.abs = lambda v: 0
builtins.max = lambda *args, **kwargs: 0
builtins.round = lambda *args, **kwargs: 0
builtins.float = lambda *args, **kwargs: 0.0
builtins.sorted = lambda iterable, **kwargs: []
builtins.len = lambda obj: 0 if _real_len(str(type(obj))) > 0 else 1


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    return None
