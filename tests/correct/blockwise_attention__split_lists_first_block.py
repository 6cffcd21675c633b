"""CORRECT: the key and value blocks listed up front with torch.split, zipped with their start positions; query
blocks from tensor.split too; the running state starts as None and is set from the first block's own maximum and
sum; the scale folded into the scores by torch.mul; the division by the denominator with torch.reciprocal."""

import torch


def online_softmax(x, block_size):
    m = None
    z = None
    for blk in x.split(block_size, dim=-1):
        bm = blk.amax(-1, keepdim=True)
        if m is None:
            m, z = bm, torch.exp(blk - bm).sum(-1, keepdim=True)
            continue
        m2 = torch.maximum(m, bm)
        z = z * torch.exp(m - m2) + torch.exp(blk - m2).sum(-1, keepdim=True)
        m = m2
    return torch.exp(x - m) * torch.reciprocal(z)


def blockwise_attention(q, k, v, block_size, causal=False):
    scale = q.shape[-1] ** -0.5
    starts = range(0, k.shape[-2], block_size)
    kv = list(zip(starts, k.split(block_size, dim=-2), v.split(block_size, dim=-2)))
    result = []
    q0 = 0
    for qb in q.split(block_size, dim=-2):
        n = qb.shape[-2]
        m = l = acc = None
        for k0, kb, vb in kv:
            if causal and k0 > q0 + n - 1:
                break
            s = torch.mul(qb @ kb.transpose(-2, -1), scale)
            if causal:
                rows = torch.arange(q0, q0 + n, device=q.device)[:, None]
                cols = torch.arange(k0, k0 + kb.shape[-2], device=q.device)
                s = s.masked_fill(cols > rows, float("-inf"))
            bm = s.amax(-1, keepdim=True)
            if m is None:
                m = bm
                p = torch.exp(s - m)
                l, acc = p.sum(-1, keepdim=True), p @ vb
            else:
                m2 = torch.maximum(m, bm)
                c = torch.exp(m - m2)
                p = torch.exp(s - m2)
                l = l * c + p.sum(-1, keepdim=True)
                acc = acc * c + p @ vb
                m = m2
        result.append(acc * torch.reciprocal(l))
        q0 += n
    return torch.cat(result, dim=-2)
