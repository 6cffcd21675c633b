"""CORRECT: one loop over the steps keeping a running sum of the rows (a fresh accumulator, never x), divided by t + 1."""
import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(x)
    running = torch.zeros_like(x[..., 0, :])  # (..., C)
    for t in range(x.size(-2)):
        running = running + x[..., t, :]
        out[..., t, :] = running / (t + 1)
    return out
