import torch


def causal_mean_loop(x):
    B, T, C = x.shape
    out = torch.zeros_like(x)
    for b in range(B):
        for t in range(T):
            out[b, t] = x[b, : t + 1].mean(0)
    return out
