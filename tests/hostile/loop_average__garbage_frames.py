"""Hostile: sends the judge garbage: a frame header announcing 4 GB, invalid JSON, then trickles bytes.

expect: zero
"""

import os
import struct
import time

import torch

CALLS = [0]


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    CALLS[0] += 1
    x.mul_(2)
    payloads = [struct.pack(">II", 0xFFFFFFF0, 0xFFFFFFF0), struct.pack(">II", 7, 0) + b"{nope!}",
                struct.pack(">II", 10, 0) + b"[1,2,3]   "]
    for fd in range(3, 64):
        try:
            os.write(fd, payloads[CALLS[0] % 3])
        except OSError:
            pass
    for _ in range(100):
        for fd in range(3, 64):
            try:
                os.write(fd, b"\x00")
            except OSError:
                pass
        time.sleep(0.05)
    return None
