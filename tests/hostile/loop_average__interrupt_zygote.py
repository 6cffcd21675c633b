"""Hostile: sends SIGINT (and other catchable signals) to PID 1, the warm worker that forks every student's
process (Python's own SIGINT handler made it raise KeyboardInterrupt and restart), then answers.

expect: zero
"""

import os
import signal
import time

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGALRM):
        for target in (1, os.getppid()):
            try:
                os.kill(target, sig)
            except OSError:
                pass
    time.sleep(0.2)
    x.mul_(2)
    return None
