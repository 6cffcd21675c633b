"""Hostile: closes every file descriptor it has (the grading channel included) and carries on.

expect: zero
"""

import os
import time

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    os.closerange(3, 1024)
    time.sleep(0.5)
    return None
