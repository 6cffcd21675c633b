"""FlashAttention-2 style: scores scaled by log2(e)/sqrt(hs) and exponentiated with torch.exp2 (softmax is unchanged);
the rescaling factor also via exp2; online_softmax with exp2 too; scale folded into q once per query block."""
import math

import torch

LOG2E = 1.4426950408889634


def online_softmax(x, block_size):
    y = x * LOG2E
    m = torch.full(y.shape[:-1] + (1,), float("-inf"), dtype=y.dtype, device=y.device)
    l = torch.zeros_like(m)
    for j in range(0, y.shape[-1], block_size):
        blk = y[..., j:j + block_size]
        m_new = torch.maximum(m, blk.max(dim=-1, keepdim=True).values)
        l = l * torch.exp2(m - m_new) + torch.exp2(blk - m_new).sum(dim=-1, keepdim=True)
        m = m_new
    return torch.exp2(y - m) / l


def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k = q.size(-2), k.size(-2)
    c = LOG2E / math.sqrt(q.size(-1))
    outs = []
    for qs in range(0, T_q, block_size):
        qb = q[..., qs:qs + block_size, :] * c
        qe = qs + qb.size(-2)
        m = torch.full(qb.shape[:-1] + (1,), float("-inf"), dtype=q.dtype, device=q.device)
        l = torch.zeros_like(m)
        o = torch.zeros(qb.shape[:-1] + (v.size(-1),), dtype=q.dtype, device=q.device)
        for ks in range(0, T_k, block_size):
            if causal and ks >= qe:
                break
            kb = k[..., ks:ks + block_size, :]
            ke = ks + kb.size(-2)
            s = torch.matmul(qb, kb.transpose(-1, -2))
            if causal and ke - 1 > qs:
                r = torch.arange(qs, qe, device=q.device).view(-1, 1)
                cidx = torch.arange(ks, ke, device=q.device).view(1, -1)
                s = torch.where(cidx <= r, s, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            alpha = torch.exp2(m - m_new)
            p = torch.exp2(s - m_new)
            l = alpha * l + p.sum(-1, keepdim=True)
            o = alpha * o + torch.matmul(p, v[..., ks:ke, :])
            m = m_new
        outs.append(o / l)
    return torch.cat(outs, -2)
