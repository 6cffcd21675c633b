"""MISTAKE: none"""
import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    w = torch.tril(torch.ones(T, T))
    return w / w.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    return causal_mean_weights(x.shape[-2]).to(x) @ x
