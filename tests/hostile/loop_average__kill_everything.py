"""Hostile: kill(-1, SIGKILL), i.e. every process it is allowed to signal, at import and in the call.

expect: zero
"""

import os
import signal

import torch


def _kill_all():
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass


_kill_all()


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    _kill_all()
    x.mul_(2)
    return None
