"""CORRECT: torch.split into blocks, an update helper, a triu(diagonal=...) block mask, the output allocated up front
and filled per query block."""

import torch

_NEG_INF = float("-inf")


def _online_update(m: torch.Tensor, l: torch.Tensor, acc: torch.Tensor | None,
                   s: torch.Tensor, v_blk: torch.Tensor | None):
    m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
    corr = (m - m_new).exp()
    p = (s - m_new).exp()
    l = l * corr + p.sum(dim=-1, keepdim=True)
    if acc is not None:
        acc = acc * corr + p @ v_blk
    return m_new, l, acc



def online_softmax(x: torch.Tensor, block_size: int) -> torch.Tensor:
    stats_shape = (*x.shape[:-1], 1)
    m = x.new_full(stats_shape, _NEG_INF)
    l = x.new_zeros(stats_shape)
    for blk in torch.split(x, block_size, dim=-1):  # the last block may be shorter
        m, l, _ = _online_update(m, l, None, blk, None)
    return (x - m).exp() / l


def blockwise_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_size: int, causal: bool = False
) -> torch.Tensor:
    *lead, T_q, hs = q.shape
    _T_k, hs_v = k.shape[-2], v.shape[-1]
    scale = hs ** -0.5
    out = q.new_empty((*lead, T_q, hs_v))  # filled one query block at a time
    k_blocks = torch.split(k, block_size, dim=-2)
    v_blocks = torch.split(v, block_size, dim=-2)
    for qi, q_blk in enumerate(torch.split(q, block_size, dim=-2)):
        q0 = qi * block_size
        q1 = q0 + q_blk.shape[-2]
        q_blk = q_blk * scale
        m = q_blk.new_full((*q_blk.shape[:-1], 1), _NEG_INF)
        l = torch.zeros_like(m)
        acc = q_blk.new_zeros((*q_blk.shape[:-1], hs_v))
        for ki, (k_blk, v_blk) in enumerate(zip(k_blocks, v_blocks)):
            k0 = ki * block_size
            if causal and k0 >= q1:
                break  # this block and every later one are wholly in the future
            s = q_blk @ k_blk.mT
            k1 = k0 + k_blk.shape[-2]
            if causal and k1 > q0 + 1:
                future = torch.ones(q1 - q0, k1 - k0, dtype=torch.bool, device=q.device).triu(diagonal=q0 - k0 + 1)
                s = s.masked_fill(future, _NEG_INF)
            m, l, acc = _online_update(m, l, acc, s, v_blk)
        out[..., q0:q1, :] = acc / l
    return out
