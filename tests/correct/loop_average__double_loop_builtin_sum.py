"""CORRECT: two loops over the steps (t, then s <= t) on the flattened batch, adding rows with Python's sum();
each mean kept with keepdim=False and copied into a fresh x.new_zeros tensor."""

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    *lead, T, C = x.shape
    flat = x.reshape(-1, T, C)
    out = flat.new_zeros(flat.shape)
    for b in range(flat.shape[0]):
        for t in range(T):
            total = sum(flat[b, s] for s in range(t + 1))
            out[b, t].copy_(total / (t + 1))
    return out.view(*lead, T, C)
