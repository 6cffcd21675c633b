"""Hostile: the control's loop over blocks of 8 steps (one iteration per 8 steps, so fewer operations than steps at
T = 64), padded with live identity operations to the count it has at T = 64 at every length: flat counts, under
the bound of one operation per step, where the vectorisation check measured only T = 4 and T = 64.

control: tril_average__block_loop.py
expect-fail: number of tensor operations does not grow
"""

import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    tril = torch.tril(torch.ones(T, T, device=device, dtype=dtype))
    return tril / tril.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    T = x.shape[-2]
    outs, run = [], None
    for s in range(0, T, 8):
        c = x[..., s : s + 8, :].cumsum(dim=-2)
        if run is not None:
            c = c + run
        run = c[..., -1:, :]
        outs.append(c)
    steps = torch.arange(1, T + 1, dtype=x.dtype, device=x.device).unsqueeze(-1)
    out = torch.cat(outs, dim=-2) / steps
    for _ in range(max(0, 4 * (64 // 8 - len(outs)))):  # live: the count of T = 64 at every shorter T
        out = out * 1.0
    return out
