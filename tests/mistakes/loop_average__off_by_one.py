"""MISTAKE: off-by-one slice (x[:t] instead of x[:t+1])"""
import torch


def causal_mean_loop(x):
    B, T, C = x.shape
    out = torch.zeros_like(x)
    for b in range(B):
        for t in range(1, T):
            out[b, t] = x[b, :t].mean(dim=0)
    return out
