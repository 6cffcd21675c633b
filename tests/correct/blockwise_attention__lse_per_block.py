"""CORRECT: the running statistic carried as a log-sum-exp (lse = m + log l): each block's own normaliser is
torch.logsumexp over that block only, merged with torch.logaddexp; the accumulator is rescaled by exp(lse_old -
lse_new) and kept normalised. online_softmax with the running maximum and sum, its blocks taken with
torch.tensor_split at the multiples of block_size."""

import math

import torch


def online_softmax(x, block_size):
    m = torch.full_like(x[..., :1], float("-inf"))
    total = torch.zeros_like(m)
    for blk in torch.tensor_split(x, list(range(block_size, x.shape[-1], block_size)), dim=-1):
        m_new = torch.maximum(m, blk.amax(-1, keepdim=True))
        total = total * (m - m_new).exp() + (blk - m_new).exp().sum(-1, keepdim=True)
        m = m_new
    return (x - m).exp() / total


def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    q = q / math.sqrt(q.shape[-1])
    outs = []
    for q0 in range(0, T_q, block_size):
        q1 = min(q0 + block_size, T_q)
        qb = q[..., q0:q1, :]
        lse = torch.full((*qb.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
        o = torch.zeros((*qb.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
        for k0 in range(0, min(q1, T_k) if causal else T_k, block_size):
            k1 = min(k0 + block_size, T_k)
            s = qb @ k[..., k0:k1, :].mT
            if causal:
                s = s.masked_fill(
                    torch.arange(k0, k1, device=q.device) > torch.arange(q0, q1, device=q.device)[:, None],
                    float("-inf"),
                )
            blk = torch.logsumexp(s, dim=-1, keepdim=True)
            new = torch.logaddexp(lse, blk)
            o = o * torch.exp(lse - new) + torch.exp(s - new) @ v[..., k0:k1, :]
            lse = new
        outs.append(o)
    return torch.cat(outs, dim=-2)
