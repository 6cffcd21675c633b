"""Hostile: writes its own "reply" frames (a perfect value, an empty op record) straight into every open file
descriptor, the grading channel among them, then waits.

expect: zero
"""

import json
import os
import struct
import time

import torch


def _forge(x):
    steps = torch.arange(1, x.shape[-2] + 1, dtype=torch.float64).unsqueeze(-1)
    answer = (x.detach().double().cpu().cumsum(-2) / steps).contiguous().numpy()
    blob = answer.tobytes()
    for rid in (0, 1, 2):
        header = json.dumps({"ok": True, "id": rid, "value": {"__nd__": [0, len(blob)], "np": "<f8",
                             "dtype": "float64", "shape": list(answer.shape), "device": "cpu"},
                             "record": {"n_ops": 1, "forbidden": [], "tampered": []},
                             "inputs_changed": [False]}).encode()
        frame = struct.pack(">II", len(header), len(blob)) + header + blob
        for fd in range(3, 64):
            try:
                os.write(fd, frame)
            except OSError:
                pass


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    _forge(x)
    x.mul_(2)
    time.sleep(1)
    return None
