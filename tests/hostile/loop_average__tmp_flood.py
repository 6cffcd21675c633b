"""Hostile: fill the sandbox's /tmp with empty files. Each holds an inode and a directory entry of kernel memory
that neither the tmpfs's byte size nor the memory budget counts (711,000 in 5 s held 700 MB; a class of such
students, several judges at once, would take the host's memory). Past the sandbox's limit on /tmp's entries the
child is ended.

expect: zero
"""

import os
import time

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    started, made = time.monotonic(), 0
    while time.monotonic() - started < 3:  # the suite's call timeout is 4 s
        os.close(os.open(f"/tmp/flood{made}", os.O_CREAT | os.O_WRONLY, 0o600))
        made += 1
    x.mul_(2)
    return x[..., :1]
