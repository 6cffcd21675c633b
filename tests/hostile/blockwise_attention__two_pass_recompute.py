"""Hostile: two passes over the key blocks that recompute the scores. The first takes the row maximum block by
block (each block's scores dropped once its maximum is read), the second computes every block's scores again and
exponentiates, sums and multiplies by v against that maximum: no rescaling, no tensor larger than (T_q,
block_size), no more than two blocks of scores alive at once, and the right values, at 1.5 times the work of one
pass (the scores computed twice). The online softmax is an honest one.

expect-fail: computes each score once
"""
import math
import torch


def online_softmax(x, block_size):
    m = x.new_full((*x.shape[:-1], 1), float("-inf"))
    total = x.new_zeros((*x.shape[:-1], 1))
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start:start + block_size]
        m_new = torch.maximum(m, block.amax(dim=-1, keepdim=True))
        total = total * torch.exp(m - m_new) + torch.exp(block - m_new).sum(dim=-1, keepdim=True)
        m = m_new
    return torch.exp(x - m) / total


def _scores(qb, k, q0, q1, k0, block_size, scale, causal):
    k1 = min(k.shape[-2], k0 + block_size)
    s = (qb @ k[..., k0:k1, :].transpose(-2, -1)) * scale
    if causal and k1 - 1 > q0:
        rows = torch.arange(q0, q1, device=qb.device).unsqueeze(-1)
        cols = torch.arange(k0, k1, device=qb.device)
        s = s.masked_fill(cols > rows, float("-inf"))
    return s


def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    outputs = []
    for q0 in range(0, T_q, block_size):
        qb = q[..., q0:q0 + block_size, :]
        q1 = q0 + qb.shape[-2]
        starts = [k0 for k0 in range(0, T_k, block_size) if not (causal and k0 > q1 - 1)]
        m = None  # pass 1: the true row maximum, one block of scores at a time
        for k0 in starts:
            top = _scores(qb, k, q0, q1, k0, block_size, scale, causal).amax(dim=-1, keepdim=True)
            m = top if m is None else torch.maximum(m, top)
        denom = acc = None  # pass 2: the same scores computed again, against the final maximum
        for k0 in starts:
            p = torch.exp(_scores(qb, k, q0, q1, k0, block_size, scale, causal) - m)
            pv = p @ v[..., k0:k0 + block_size, :]
            denom = p.sum(dim=-1, keepdim=True) if denom is None else denom + p.sum(dim=-1, keepdim=True)
            acc = pv if acc is None else acc + pv
        outputs.append(acc / denom)
    return torch.cat(outputs, dim=-2)
