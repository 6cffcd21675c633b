"""Hostile: every call waits just under the call timeout, so that no single call times out and a stage of many
calls (a class of such students) lasts for hours. The stage's budget for all its calls together ends it.

expect: zero
"""

import time

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    time.sleep(2.5)  # the suite's call timeout is 4 s, its stage budget 6 s
    x.mul_(2)
    return x[..., :1]
