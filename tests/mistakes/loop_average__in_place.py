"""MISTAKE: input modified in place"""
import torch


def causal_mean_loop(x):
    B, T, C = x.shape
    for b in range(B):
        for t in reversed(range(T)):
            x[b, t] = x[b, : t + 1].mean(dim=0)
    return x
