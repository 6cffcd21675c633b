"""CORRECT: key blocks in the outer loop, each updating the running statistics of every query row that sees it (rows
joined with cat), float64 inside, cast back."""
import math

import torch


def online_softmax(x: torch.Tensor, block_size: int) -> torch.Tensor:
    x64 = x.to(torch.float64)  # running statistics in float64
    N = x.shape[-1]
    m = torch.full_like(x64[..., :1], -math.inf)
    l = torch.zeros_like(m)
    for i in range(-(-N // block_size)):
        blk = x64[..., i * block_size:(i + 1) * block_size]
        m_next = torch.maximum(m, blk.amax(dim=-1, keepdim=True))
        l = l * torch.exp(m - m_next) + torch.exp(blk - m_next).sum(dim=-1, keepdim=True)
        m = m_next
    return (torch.exp(x64 - m) / l).to(x.dtype)


def blockwise_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_size: int, causal: bool = False
) -> torch.Tensor:
    # Key blocks in the outer loop: every key block updates the running statistics of the
    # queries that may see it (with causal=True, only queries t >= the block's first key).
    out_dtype = q.dtype
    q64 = q.to(torch.float64) / math.sqrt(q.shape[-1])
    k64, v64 = k.to(torch.float64), v.to(torch.float64)
    T_q, T_k = q.shape[-2], k.shape[-2]
    m = torch.full((*q64.shape[:-1], 1), -math.inf, dtype=torch.float64, device=q.device)
    l = torch.zeros_like(m)
    acc = torch.zeros((*q64.shape[:-1], v.shape[-1]), dtype=torch.float64, device=q.device)
    for k0 in range(0, T_k, block_size):
        first = k0 if causal else 0  # earlier queries only see keys before k0
        if first >= T_q:
            break
        k_blk = k64[..., k0:k0 + block_size, :]
        k1 = k0 + k_blk.shape[-2]
        s = torch.einsum("...qd,...kd->...qk", q64[..., first:, :], k_blk)
        if causal:
            t = torch.arange(first, T_q, device=q.device)[:, None]
            j = torch.arange(k0, k1, device=q.device)[None, :]
            s = s.masked_fill(j > t, -math.inf)  # row `first` = k0 always sees key k0
        m_old = m[..., first:, :]
        m_new = torch.maximum(m_old, s.amax(dim=-1, keepdim=True))
        corr = torch.exp(m_old - m_new)
        p = torch.exp(s - m_new)
        l = torch.cat([l[..., :first, :], l[..., first:, :] * corr + p.sum(dim=-1, keepdim=True)], dim=-2)
        acc = torch.cat([acc[..., :first, :],
                         acc[..., first:, :] * corr + torch.einsum("...qk,...kd->...qd", p, v64[..., k0:k1, :])], dim=-2)
        m = torch.cat([m[..., :first, :], m_new], dim=-2)
    return (acc / l).to(out_dtype)
