"""CORRECT: recursion over the leading dims (a (T, C) sequence is the base case, a batch recurses on each element
and stacks); the base case loops over the steps with torch.mean over a slice."""

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    if x.dim() > 2:
        return torch.stack([causal_mean_loop(seq) for seq in x])
    T = x.shape[0]
    out = torch.zeros_like(x)
    for t in range(T):
        out[t] = torch.mean(x[0 : t + 1], dim=0)
    return out
