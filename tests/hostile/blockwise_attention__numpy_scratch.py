"""Hostile: the whole (T_q, T_k) scores kept in scratch memory made with numpy (a constant to the graph, made by
no torch op), filled and normalised one key block at a time in place: no tensor an op makes is larger than
(T_q, block_size), but the scratch is. The bound counts the constants the answer depends on too.

control: blockwise_attention__whole_row.py
expect-fail: never creates a tensor larger
"""
import math

import numpy as np
import torch


def online_softmax(x, block_size):
    N = x.shape[-1]
    m = x.new_full((*x.shape[:-1], 1), float("-inf"))
    total = x.new_zeros((*x.shape[:-1], 1))
    for start in range(0, N, block_size):
        block = x[..., start:start + block_size]
        m_new = torch.maximum(m, block.amax(dim=-1, keepdim=True))
        total = total * torch.exp(m - m_new) + torch.exp(block - m_new).sum(dim=-1, keepdim=True)
        m = m_new
    return torch.exp(x - m) / total


def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    lead = tuple(q.shape[:-2])
    s = torch.from_numpy(np.zeros(lead + (T_q, T_k), dtype=str(q.dtype)[6:] if q.dtype != torch.bfloat16 else "float32"))  # scratch: a constant
    if s.dtype != q.dtype:
        s = s.to(q.dtype)
    blocks = [(k0, min(T_k, k0 + block_size)) for k0 in range(0, T_k, block_size)]
    for k0, k1 in blocks:  # the full scores, one (T_q, block) slab at a time
        s[..., k0:k1] = q @ k[..., k0:k1, :].transpose(-2, -1) * scale
        if causal:
            rows = torch.arange(T_q, device=q.device).unsqueeze(-1)
            cols = torch.arange(k0, k1, device=q.device)
            s[..., k0:k1].masked_fill_(cols > rows, float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    for k0, k1 in blocks:
        s[..., k0:k1].sub_(m).exp_()
    return (s @ v) / s.sum(dim=-1, keepdim=True)
