"""Hostile: replaces its output file with a FIFO (the zygote's read of the output tail blocked on it, 32 s per
child) and one with a link to /dev/zero (the read grew the zygote without limit), at import, then answers.

expect: zero
"""

import os

import torch

try:
    os.unlink(".output")
    os.mkfifo(".output")
except OSError:
    pass


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    try:
        os.unlink(".output")
        os.symlink("/dev/zero", ".output")
    except OSError:
        pass
    x.mul_(2)
    return None
