"""Hostile: looks for SysV shared memory, message queues and semaphores left by an earlier student's process of
the same judge (a channel between students), and leaves its own for the next one, then answers.

expect: zero
"""

import ctypes

import torch

KEY = 0x5EC2E8
_libc = ctypes.CDLL(None, use_errno=True)
FOUND = [_libc.shmget(KEY, 0, 0o666) >= 0, _libc.msgget(KEY, 0o666) >= 0]
_libc.shmget(KEY, 4096, 0o1666)
_libc.msgget(KEY, 0o1666)


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    return None
