"""Hostile: forks 12 processes that each take 100 MB, so no single process passes its own memory limit
(bounded: the sandbox's whole-tree memory budget kills them all).

expect: zero
"""

import os
import time

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    for _ in range(12):
        try:
            if os.fork() == 0:
                block = bytearray(100 * 2**20)  # noqa: F841 - held until killed
                time.sleep(60)
                os._exit(0)
        except OSError:
            break
    time.sleep(60)
    return None
