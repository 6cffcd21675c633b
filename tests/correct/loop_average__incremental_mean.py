"""CORRECT: the incremental (Welford-style) mean: avg_t = avg_{t-1} + (x_t - avg_{t-1}) / (t + 1), one loop over
the steps on ellipsis-indexed views, written into torch.empty_like."""

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    avg = torch.zeros_like(x[..., 0, :])
    for t in range(x.shape[-2]):
        avg = avg + (x[..., t, :] - avg) / (t + 1)
        out[..., t, :] = avg
    return out
