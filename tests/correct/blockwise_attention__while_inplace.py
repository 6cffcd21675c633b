"""CORRECT: while loops over query and key blocks with min() for the last block's end; the running state updated
in place (mul_, add_, copy_); the causal diagonal blocks get an additive bias built with torch.where(cols <= rows,
0, -inf); online_softmax written with exp of differences and torch.max(...).values, the result divided in place."""

import math

import torch


def online_softmax(x, block_size):
    N = x.shape[-1]
    m = torch.full_like(x[..., :1], float("-inf"))
    s = torch.zeros_like(x[..., :1])
    i = 0
    while i < N:
        j = min(i + block_size, N)
        chunk = x[..., i:j]
        m_new = torch.max(torch.cat([m, chunk], dim=-1), dim=-1, keepdim=True).values
        s = s * torch.exp(m - m_new) + torch.exp(chunk - m_new).sum(dim=-1, keepdim=True)
        m = m_new
        i = j
    out = torch.exp(x - m)
    out.div_(s)
    return out


def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k, hs = q.shape[-2], k.shape[-2], q.shape[-1]
    out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
    qs = 0
    while qs < T_q:
        qe = min(qs + block_size, T_q)
        qb = q[..., qs:qe, :]
        m = torch.full((*qb.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
        den = torch.zeros((*qb.shape[:-1], 1), dtype=q.dtype, device=q.device)
        acc = torch.zeros((*qb.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
        ks = 0
        last = min(T_k, qe) if causal else T_k
        while ks < last:
            ke = min(ks + block_size, T_k)
            sc = torch.matmul(qb, k[..., ks:ke, :].transpose(-1, -2)) / math.sqrt(hs)
            if causal and ke - 1 > qs:
                rows = torch.arange(qs, qe, device=q.device).view(-1, 1)
                cols = torch.arange(ks, ke, device=q.device).view(1, -1)
                zero = torch.zeros((), dtype=q.dtype, device=q.device)
                sc = sc + torch.where(cols <= rows, zero, zero - float("inf"))
            m_new = torch.maximum(m, sc.amax(dim=-1, keepdim=True))
            alpha = torch.exp(m - m_new)
            p = torch.exp(sc - m_new)
            den.mul_(alpha).add_(p.sum(dim=-1, keepdim=True))
            acc.mul_(alpha).add_(p @ v[..., ks:ke, :])
            m.copy_(m_new)
            ks = ke
        out[..., qs:qe, :] = acc / den
        qs = qe
    return out
