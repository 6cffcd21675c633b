"""Hostile: forks until the system says no (every child sleeps), at import and in each call.

expect: zero
"""

import os
import time

import torch


def _bomb(limit=2000):
    n = 0
    while n < limit:
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(120)
            os._exit(0)
        n += 1
    return n


FORKED = _bomb()


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    _bomb(200)
    x.mul_(2)
    return None
