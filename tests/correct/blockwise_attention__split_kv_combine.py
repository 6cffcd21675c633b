"""CORRECT: flash-decoding (split-K) style: each key block's partial output (normalised by its own sum) and its
log-sum-exp are computed independently and kept (hs_v + 1 numbers per query and block), then combined at the end
with weights exp(lse_j - max lse); torch.chunk splits the queries, blocks taken with range(0, T, block_size).
online_softmax keeps per-block maxima and sums and combines them at the end in the same way."""

import math

import torch


def online_softmax(x, block_size):
    maxes, sums = [], []
    for s in range(0, x.shape[-1], block_size):
        blk = x[..., s : s + block_size]
        mb = blk.amax(-1, keepdim=True)
        maxes.append(mb)
        sums.append(torch.exp(blk - mb).sum(-1, keepdim=True))
    M = torch.cat(maxes, dim=-1)
    m = M.amax(-1, keepdim=True)
    total = (torch.cat(sums, dim=-1) * torch.exp(M - m)).sum(-1, keepdim=True)
    return torch.exp(x - m) / total


def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scale = math.sqrt(q.shape[-1])
    n_q = -(-T_q // block_size)
    outs = []
    q0 = 0
    for qb in torch.chunk(q, n_q, dim=-2):
        q1 = q0 + qb.shape[-2]
        partial, lses = [], []
        for k0 in range(0, T_k, block_size):
            if causal and k0 >= q1:
                break
            k1 = min(k0 + block_size, T_k)
            s = qb @ k[..., k0:k1, :].transpose(-2, -1) / scale
            if causal and k1 > q0 + 1:
                hide = torch.arange(k0, k1, device=q.device) > torch.arange(q0, q1, device=q.device)[:, None]
                s = s.masked_fill(hide, float("-inf"))
            mb = s.amax(-1, keepdim=True)
            # a query that sees no key of this block gets lse = -inf and weight 0 when combined
            safe = torch.where(torch.isinf(mb), torch.zeros_like(mb), mb)
            p = torch.exp(s - safe)
            sb = p.sum(-1, keepdim=True)
            partial.append(p @ v[..., k0:k1, :] / sb.clamp_min(torch.finfo(sb.dtype).tiny))
            lses.append(safe + torch.log(sb))
        L = torch.cat(lses, dim=-1)  # (..., bq, n_blocks)
        w = torch.exp(L - L.amax(-1, keepdim=True))
        w = w / w.sum(-1, keepdim=True)
        out = sum(w[..., j : j + 1] * o for j, o in enumerate(partial))
        outs.append(out)
        q0 = q1
    return torch.cat(outs, dim=-2)
