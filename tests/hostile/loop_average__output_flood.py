"""Hostile: floods stdout and stderr and fills its working directory with files.

expect: zero
"""

import os
import sys

import torch

LINE = "PASSED " * 100 + "\n"


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    try:
        for i in range(200):
            with open(f"flood{i}.txt", "w") as fh:
                fh.write("x" * (4 * 2**20))
    except OSError:
        pass
    for _ in range(10**6):
        sys.stdout.write(LINE)
        sys.stderr.write(LINE)
    return None
