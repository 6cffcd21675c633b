"""MISTAKE: input modified in place
out = x is not a copy: the loop writes its averages into the caller's x, in time order, so every later step
averages the averages already written there instead of the inputs (the reversed order would at least be right).
"""

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    out = x  # not a copy: writing out writes x
    for t in range(x.shape[-2]):
        out[..., t, :] = x[..., : t + 1, :].mean(dim=-2)
    return out
