"""Hostile: forks 6 processes that each map 100 MB of shared anonymous memory (MAP_SHARED | MAP_ANONYMOUS) and
write it: resident, yet not private, so a budget of private pages alone would not see it (bounded: the sandbox's
whole-tree memory budget counts shared memory too, and kills them all).

expect: zero
"""

import mmap
import os
import time

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    for _ in range(6):
        try:
            if os.fork() == 0:
                block = mmap.mmap(-1, 100 * 2**20, flags=mmap.MAP_SHARED)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                time.sleep(60)
                os._exit(0)
        except OSError:
            break
    time.sleep(60)
    return None
