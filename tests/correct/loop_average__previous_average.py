"""CORRECT: each average from the previous one, out[t] = (t * out[t-1] + x[t]) / (t + 1), on a clone of x whose
rows are overwritten in time order; keepdim=True rows are assigned to (C,) rows (leading 1s are dropped)."""

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    T, C = x.shape[-2], x.shape[-1]
    seqs = x.reshape(-1, T, C)
    out = seqs.clone()
    for b in range(seqs.shape[0]):
        for t in range(1, T):
            out[b, t] = (t * out[b, t - 1 : t] + seqs[b, t : t + 1]) / (t + 1)
    return out.reshape(x.shape)
