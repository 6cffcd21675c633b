"""Control of the blocked-loop attack: a Python loop over time in blocks of 8 steps (a cumulative sum per block,
the running sum carried from block to block), without any trick."""

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
    return torch.cat(outs, dim=-2) / steps
