"""Hostile: ignores every signal it can (SIGTERM, SIGINT, SIGHUP, SIGALRM...) and never returns.

expect: zero
"""

import signal
import time

import torch

for _sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM, signal.SIGUSR1, signal.SIGXCPU,
             signal.SIGPIPE, signal.SIGQUIT):
    signal.signal(_sig, signal.SIG_IGN)


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    while True:
        time.sleep(0.05)
