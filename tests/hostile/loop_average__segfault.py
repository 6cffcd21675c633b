"""Hostile: crashes its own process with a segmentation fault (ctypes NULL read, else SIGSEGV to itself).

expect: zero
"""

import os
import signal

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    try:
        import ctypes

        ctypes.string_at(0)
    except Exception:
        pass
    os.kill(os.getpid(), signal.SIGSEGV)
    return None
