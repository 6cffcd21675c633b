"""Hostile: leaves with os._exit(0) mid-call (no exception, exit code 0).

expect: zero
"""

import os

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    os._exit(0)
