"""MISTAKE: none
Loops over x.shape[0] and slices x[b, :t + 1]: right for (B, T, C), but with extra leading dims (B, H, T, C) the
slice runs along H, not time. No known mistake gives these numbers.
"""

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    T = x.shape[-2]
    out = torch.zeros_like(x)
    for b in range(x.shape[0]):
        for t in range(T):
            out[b, t] = x[b, : t + 1].mean(dim=0)
    return out
