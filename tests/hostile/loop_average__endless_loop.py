"""Hostile: a busy loop that never ends, in the graded function.

expect: zero
"""

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    n = 0
    while True:
        n += 1
