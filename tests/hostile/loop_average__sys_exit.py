"""Hostile: ends the process politely with sys.exit(0), hoping a clean exit reads as success.

expect: zero
"""

import sys

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    sys.exit(0)
