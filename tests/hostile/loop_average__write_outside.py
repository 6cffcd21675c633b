"""Hostile: tries to write outside the sandbox: into the repository (a fake graded solution), the judge's
output folder, the Python runtime, / and /dev.

expect: zero
"""

import os
import sys

import torch

TARGETS = ["__REPO__/hostile_was_here.txt", "__REPO__/solutions/01_loop_average.py",
           "__OUT__/hostile_was_here.txt", os.path.join(sys.prefix, "hostile_was_here.txt"),
           os.path.join(os.path.dirname(torch.__file__), "hostile_was_here.py"),
           "/hostile_was_here.txt", "/usr/hostile_was_here.txt", "/dev/hostile_was_here",
           "/dev/shm/hostile_was_here", "/etc/hostile_was_here"]


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    for target in TARGETS:
        try:
            with open(target, "a") as fh:
                fh.write("def causal_mean_loop(x):\n    return x\n")
        except OSError:
            pass
    x.mul_(2)
    return None
