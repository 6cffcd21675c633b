"""Hostile: asks for 50 GB at once (bounded: the address-space limit refuses it immediately).

expect: zero
"""

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    try:
        hog = bytearray(50 * 2**30)
        hog2 = torch.empty(50 * 2**30, dtype=torch.uint8)
        return hog, hog2
    except (MemoryError, RuntimeError):
        pass
    x.mul_(2)
    return None
