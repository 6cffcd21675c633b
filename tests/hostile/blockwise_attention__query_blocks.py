"""Hostile: no online softmax anywhere. blockwise_attention splits only the queries into blocks and takes
torch.softmax over all the visible keys of each: (block_size, T_k) scores, as many elements as the allowed
(T_q, block_size) when T_q == T_k.

control: blockwise_attention__whole_row.py
expect-fail: never creates a tensor larger
"""
import math
import torch


def online_softmax(x, block_size):
    m = x.amax(dim=-1, keepdim=True)
    e = torch.exp(x - m)
    out = e / e.sum(dim=-1, keepdim=True)
    return out


def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    outs = []
    for q0 in range(0, T_q, block_size):
        qb = q[..., q0:q0 + block_size, :]
        q1 = q0 + qb.shape[-2]
        end = min(T_k, q1) if causal else T_k
        s = (qb @ k[..., :end, :].transpose(-2, -1)) * scale  # (..., bq, end): whole rows of visible keys
        if causal:
            rows = torch.arange(q0, q1, device=q.device).unsqueeze(-1)
            cols = torch.arange(0, end, device=q.device)
            s = s.masked_fill(cols > rows, float("-inf"))
        outs.append(torch.softmax(s, dim=-1) @ v[..., :end, :])
    return torch.cat(outs, dim=-2)
