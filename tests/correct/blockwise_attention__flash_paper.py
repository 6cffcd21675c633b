"""CORRECT: Algorithm 1 of the FlashAttention paper: key/value blocks in the outer loop, query blocks inside; O, l
and m kept for every query in preallocated tensors; each block's own max m_ij and sum l_ij, merged with
m_new = max(m_i, m_ij), l_new = exp(m_i - m_new) l_i + exp(m_ij - m_new) l_ij, and O kept normalised:
O_i = (l_i exp(m_i - m_new) O_i + exp(m_ij - m_new) P_ij V_j) / l_new. online_softmax the same way."""

import math

import torch


def online_softmax(x, block_size):
    N = x.shape[-1]
    m = torch.full(x.shape[:-1] + (1,), -math.inf, dtype=x.dtype, device=x.device)
    l = torch.zeros(x.shape[:-1] + (1,), dtype=x.dtype, device=x.device)
    for j in range(math.ceil(N / block_size)):
        xj = x[..., j * block_size : (j + 1) * block_size]
        m_ij = xj.max(dim=-1, keepdim=True).values
        l_ij = torch.exp(xj - m_ij).sum(dim=-1, keepdim=True)
        m_new = torch.maximum(m, m_ij)
        l = torch.exp(m - m_new) * l + torch.exp(m_ij - m_new) * l_ij
        m = m_new
    return torch.exp(x - m) / l


def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    lead = q.shape[:-2]
    scale = 1 / math.sqrt(q.shape[-1])
    O = torch.zeros(*lead, T_q, v.shape[-1], dtype=q.dtype, device=q.device)
    l = torch.zeros(*lead, T_q, 1, dtype=q.dtype, device=q.device)
    m = torch.full((*lead, T_q, 1), -math.inf, dtype=q.dtype, device=q.device)
    Tr, Tc = math.ceil(T_q / block_size), math.ceil(T_k / block_size)
    for j in range(Tc):
        k0, k1 = j * block_size, min((j + 1) * block_size, T_k)
        Kj, Vj = k[..., k0:k1, :], v[..., k0:k1, :]
        for i in range(Tr):
            q0, q1 = i * block_size, min((i + 1) * block_size, T_q)
            if causal and k0 > q1 - 1:
                continue  # every key of block j is after every query of block i
            S = (q[..., q0:q1, :] @ Kj.transpose(-2, -1)) * scale
            if causal and k1 - 1 > q0:
                r = torch.arange(q0, q1, device=q.device)[:, None]
                c = torch.arange(k0, k1, device=q.device)[None, :]
                S = S.masked_fill(c > r, -math.inf)
            m_ij = S.amax(dim=-1, keepdim=True)
            P = torch.exp(S - m_ij)
            l_ij = P.sum(dim=-1, keepdim=True)
            m_i, l_i = m[..., q0:q1, :], l[..., q0:q1, :]
            m_new = torch.maximum(m_i, m_ij)
            a, b = torch.exp(m_i - m_new), torch.exp(m_ij - m_new)
            l_new = a * l_i + b * l_ij
            O[..., q0:q1, :] = (l_i * a * O[..., q0:q1, :] + b * (P @ Vj)) / l_new
            l[..., q0:q1, :] = l_new
            m[..., q0:q1, :] = m_new
    return O
