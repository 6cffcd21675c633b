"""MISTAKE: none"""
import torch


def causal_mean_loop(x):
    T, C = x.shape[-2:]
    seqs = x.reshape(-1, T, C)
    out = torch.zeros(seqs.shape)  # float32 on the CPU, whatever x is
    for b in range(seqs.shape[0]):
        for t in range(T):
            out[b, t] = seqs[b, : t + 1].mean(dim=0)
    return out.reshape(x.shape)
