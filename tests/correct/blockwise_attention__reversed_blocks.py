"""CORRECT: key blocks visited in REVERSE order (the online softmax does not care about the order); scale folded into the key block; running max with torch.max(a, b); normalised online_softmax written block by block into a list and concatenated
The causal skip is decided by `if bool(ki[-1] > qi[0])`, a test on index tensors (replayed as .item()).
"""

import math

import torch


def online_softmax(x: torch.Tensor, block_size: int) -> torch.Tensor:
    N = x.shape[-1]
    starts = list(range(0, N, block_size))
    m = torch.full_like(x[..., :1], -math.inf)
    total = torch.zeros_like(x[..., :1])
    for s in starts:
        b = x[..., s:s + block_size]
        new_m = torch.max(m, b.max(dim=-1, keepdim=True).values)
        total = total * (m - new_m).exp() + (b - new_m).exp().sum(dim=-1, keepdim=True)
        m = new_m
    return torch.cat([(x[..., s:s + block_size] - m).exp() / total for s in starts], dim=-1)


def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    inv = 1.0 / math.sqrt(q.shape[-1])
    result = []
    for q0 in range(0, T_q, block_size):
        qb = q[..., q0:q0 + block_size, :]
        q1 = q0 + qb.shape[-2]
        last_key = min(T_k, q1) if causal else T_k
        starts = list(range(0, last_key, block_size))
        m = torch.full_like(qb[..., :1], -math.inf)
        den = torch.zeros_like(qb[..., :1])
        acc = qb.new_zeros(qb.shape[:-1] + (v.shape[-1],))
        for k0 in reversed(starts):
            kb = k[..., k0:k0 + block_size, :] * inv
            vb = v[..., k0:k0 + block_size, :]
            sc = qb @ kb.mT
            if causal:
                ki = torch.arange(k0, k0 + kb.shape[-2], device=q.device)
                qi = torch.arange(q0, q1, device=q.device)
                if bool(ki[-1] > qi[0]):
                    sc = sc.masked_fill(ki.view(1, -1) > qi.view(-1, 1), -math.inf)
            new_m = torch.max(m, sc.max(dim=-1, keepdim=True).values)
            f = (m - new_m).exp()
            e = (sc - new_m).exp()
            den = den * f + e.sum(-1, keepdim=True)
            acc = acc * f + e @ vb
            m = new_m
        result.append(acc / den)
    return torch.cat(result, dim=-2)
