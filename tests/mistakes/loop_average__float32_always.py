"""MISTAKE: none"""
import torch


def causal_mean_loop(x):
    B, T, C = x.shape
    out = torch.zeros(B, T, C)  # float32 on the CPU, whatever x is
    for b in range(B):
        for t in range(T):
            out[b, t] = x[b, : t + 1].mean(dim=0)
    return out
