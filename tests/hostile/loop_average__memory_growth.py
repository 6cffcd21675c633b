"""Hostile: grows a list of 32 MB blocks until the memory limit stops it (bounded by the test's small limit),
then keeps the memory and raises.

expect: zero
"""

import torch

HOARD = []


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    while len(HOARD) < 1000:  # 32 GB: the limit stops it long before
        HOARD.append(bytearray(32 * 2**20))
    return None
