import torch


def causal_mean_loop(x):
    # out[b, t] is the mean of x[b, 0..t]
    B, T, C = x.shape
    out = torch.zeros_like(x)
    for b in range(B):
        for t in range(T):
            out[b, t] = x[b, :t].mean(dim=0)
    return out
