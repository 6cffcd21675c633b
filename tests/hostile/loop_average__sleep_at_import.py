"""Hostile: sleeps for an hour while being imported (the import runs under the same per-call timeout).

expect: zero
"""

import time

import torch

time.sleep(3600)


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    steps = torch.arange(1, x.shape[-2] + 1, dtype=x.dtype, device=x.device).unsqueeze(-1)
    return x.cumsum(-2) / steps
