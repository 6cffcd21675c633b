"""CORRECT: A reused workspace: each query block's scores are written into one preallocated buffer with
torch.matmul(..., out=view) and updated in place (mul_, masked_fill_, sub_, exp_), as performance code avoids
allocations; running statistics as in the solution."""
import math

import torch


def online_softmax(x: torch.Tensor, block_size: int) -> torch.Tensor:
    N = x.shape[-1]
    m = x.new_full((*x.shape[:-1], 1), float("-inf"))
    l = x.new_zeros((*x.shape[:-1], 1))
    work = x.new_empty((*x.shape[:-1], min(block_size, N)))
    for a in range(0, N, block_size):
        blk = x[..., a:a + block_size]
        w = work[..., : blk.shape[-1]]
        w.copy_(blk)
        m_new = torch.maximum(m, w.amax(dim=-1, keepdim=True))
        w.sub_(m_new).exp_()
        l = l * torch.exp(m - m_new) + w.sum(dim=-1, keepdim=True)
        m = m_new
    return torch.exp(x - m) / l


def blockwise_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_size: int, causal: bool = False
) -> torch.Tensor:
    T_q, T_k = q.shape[-2], k.shape[-2]
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    scale = 1.0 / math.sqrt(q.shape[-1])
    outs = []
    for q0 in range(0, T_q, block_size):
        q_blk = q[..., q0:q0 + block_size, :]
        bq = q_blk.shape[-2]
        q1 = q0 + bq
        S = q.new_empty((*lead, bq, min(block_size, T_k)))
        m = q.new_full((*lead, bq, 1), float("-inf"))
        l = q.new_zeros((*lead, bq, 1))
        acc = q.new_zeros((*lead, bq, v.shape[-1]))
        stop = min(T_k, q1) if causal else T_k
        for k0 in range(0, stop, block_size):
            k_blk = k[..., k0:k0 + block_size, :]
            v_blk = v[..., k0:k0 + block_size, :]
            bk = k_blk.shape[-2]
            s = S[..., :bk]
            if bk == S.shape[-1]:
                torch.matmul(q_blk, k_blk.transpose(-2, -1), out=S)
                s = S
            else:
                s = torch.matmul(q_blk, k_blk.transpose(-2, -1))
            s.mul_(scale)
            if causal and k0 + bk - 1 > q0:
                fut = torch.arange(k0, k0 + bk, device=q.device) > torch.arange(q0, q1, device=q.device)[:, None]
                s.masked_fill_(fut, float("-inf"))
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            r = torch.exp(m - m_new)
            s.sub_(m_new).exp_()  # s now holds p
            l = l * r + s.sum(dim=-1, keepdim=True)
            acc = acc * r + s @ v_blk
            m = m_new
        outs.append(acc / l)
    return torch.cat(outs, dim=-2)
