"""Hostile: kills its parent (the warm worker that forks every student's process) with SIGKILL, then answers.

expect: zero
"""

import os
import signal
import time

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(os.getppid(), sig)
        except OSError:
            pass
    time.sleep(0.2)
    x.mul_(2)
    return None
