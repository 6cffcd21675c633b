"""Hostile: no online softmax at all. Every (T_q block, block_size) block of scores is computed first and kept
in a Python list: the row maximum is taken over all of them, then exp, sum and @ v in a second pass. Every score
of the (T_q, T_k) matrix is alive at once, but no single tensor is larger than (T_q, block_size). Future key
blocks are skipped when causal.

control: blockwise_attention__two_pass_concat.py
expect-fail: blockwise_attention never creates a tensor larger
"""
import math
import torch


def online_softmax(x, block_size):
    T = x.shape[-1]
    blocks = [x[..., s:s + block_size] for s in range(0, T, block_size)]
    m = blocks[0].amax(dim=-1, keepdim=True)
    for b in blocks[1:]:
        m = torch.maximum(m, b.amax(dim=-1, keepdim=True))
    es = [torch.exp(b - m) for b in blocks]
    l = es[0].sum(dim=-1, keepdim=True)
    for e in es[1:]:
        l = l + e.sum(dim=-1, keepdim=True)
    return torch.cat([e / l for e in es], dim=-1)


def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    outputs = []
    for q0 in range(0, T_q, block_size):
        qb = q[..., q0:q0 + block_size, :] * scale
        q1 = q0 + qb.shape[-2]
        kept = []  # every score block of this query block, all alive together
        for k0 in range(0, T_k, block_size):
            if causal and k0 > q1 - 1:
                break  # wholly in the future
            k1 = min(T_k, k0 + block_size)
            s = qb @ k[..., k0:k1, :].transpose(-2, -1)
            if causal and k1 - 1 > q0:
                rows = torch.arange(q0, q1, device=q.device).unsqueeze(-1)
                cols = torch.arange(k0, k1, device=q.device)
                s = s.masked_fill(cols > rows, float("-inf"))
            kept.append((s, v[..., k0:k1, :]))
        m = kept[0][0].amax(dim=-1, keepdim=True)  # pass 1: the true row maximum over all kept blocks
        for s, _ in kept[1:]:
            m = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        denom = acc = None  # pass 2: no rescaling ever
        for s, vb in kept:
            p = torch.exp(s - m)
            denom = p.sum(dim=-1, keepdim=True) if denom is None else denom + p.sum(dim=-1, keepdim=True)
            acc = p @ vb if acc is None else acc + p @ vb
        outputs.append(acc / denom)
    return torch.cat(outputs, dim=-2)
