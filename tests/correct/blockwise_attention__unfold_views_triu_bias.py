"""CORRECT: Whole key/value blocks taken as views with Tensor.unfold (the remainder block sliced separately); the causal
diagonal blocks get an additive bias torch.full(-inf).triu(q0 - k0 + 1); the running state carried in a tuple
through a pure update function; online_softmax reads blocks with tensor_split at block boundaries."""

import torch


def _update(state, s, v_blk):
    m, l, acc = state
    m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
    r = torch.exp(m - m_new)
    p = torch.exp(s - m_new)
    return m_new, l * r + p.sum(dim=-1, keepdim=True), acc * r + p @ v_blk


def online_softmax(x: torch.Tensor, block_size: int) -> torch.Tensor:
    N = x.shape[-1]
    cuts = list(range(block_size, N, block_size))
    m = torch.full_like(x[..., :1], float("-inf"))
    l = torch.zeros_like(x[..., :1])
    for blk in torch.tensor_split(x, cuts, dim=-1):
        m_new = torch.maximum(m, blk.amax(dim=-1, keepdim=True))
        l = l * torch.exp(m - m_new) + torch.exp(blk - m_new).sum(dim=-1, keepdim=True)
        m = m_new
    return torch.exp(x - m) / l


def _kv_blocks(k: torch.Tensor, v: torch.Tensor, n: int):
    T_k = k.shape[-2]
    full = T_k // n
    if full:
        kb = k.unfold(-2, n, n)  # (..., full, hs, n)
        vb = v.unfold(-2, n, n)  # (..., full, hs_v, n)
        for j in range(full):
            yield j * n, kb[..., j, :, :].transpose(-2, -1), vb[..., j, :, :].transpose(-2, -1)
    if full * n < T_k:
        yield full * n, k[..., full * n:, :], v[..., full * n:, :]


def blockwise_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_size: int, causal: bool = False
) -> torch.Tensor:
    T_q = q.shape[-2]
    scale = q.shape[-1] ** -0.5
    results = []
    for q0 in range(0, T_q, block_size):
        qb = q[..., q0:q0 + block_size, :]
        bq = qb.shape[-2]
        state = (
            qb.new_full((*qb.shape[:-1], 1), float("-inf")),
            qb.new_zeros((*qb.shape[:-1], 1)),
            qb.new_zeros((*qb.shape[:-1], v.shape[-1])),
        )
        for k0, kb, vb in _kv_blocks(k, v, block_size):
            if causal and k0 > q0 + bq - 1:
                break
            s = (qb @ kb.transpose(-2, -1)) * scale
            bk = kb.shape[-2]
            if causal and k0 + bk - 1 > q0:
                s = s + torch.full((bq, bk), float("-inf"), dtype=s.dtype, device=s.device).triu(q0 - k0 + 1)
            state = _update(state, s, vb)
        m, l, acc = state
        results.append(acc / l)
    return torch.cat(results, dim=-2)
