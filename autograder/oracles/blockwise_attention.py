"""Stage 10: the online softmax and blockwise attention.

The references are the plain computations (``torch.softmax``; softmax(q k^T / sqrt(hs)) v with a top-left causal
mask): blocking changes how they are computed, never what. The known mistakes are the blockwise algorithm with one
step wrong, so they depend on the block size.
"""

import math

import torch

from autograder.graders import attention as a
from autograder.graders import blockwise as b

from .causal_attention import allowed
from .self_attention import attend
from . import distinct


def online_softmax(x, block_size):
    return torch.softmax(x, dim=-1)


def blockwise_attention(q, k, v, block_size, causal=False):
    return _plain(q, k, v, causal)


def _plain(q, k, v, causal, scale=None):
    """Attention computed whole, with a top-left causal mask when ``causal``; ``scale`` None: sqrt(hs)."""
    return attend(q, k, v, scale=scale, allowed=allowed(q.shape[-2], k.shape[-2]) if causal else None)


def _diagonal_hidden(q, k, v, block_size, causal=False):
    if not causal:
        raise ValueError("no mask to get wrong")  # (a variant that raises is skipped)
    return attend(q, k, v, allowed=allowed(q.shape[-2], k.shape[-2], -1))


def _online_softmax(x, block_size, *, rescale=True, update_max=True, per_block=False, drop_remainder=False):
    """The online softmax with one of its steps switched off (see MISTAKES)."""
    N = x.shape[-1]
    end = N - N % block_size if drop_remainder else N
    if per_block:
        return torch.cat([torch.softmax(x[..., s : s + block_size], dim=-1) for s in range(0, N, block_size)], dim=-1)
    m = x.new_full((*x.shape[:-1], 1), float("-inf"))
    total = x.new_zeros((*x.shape[:-1], 1))
    for start in range(0, end, block_size):
        block = x[..., start : start + block_size]
        m_new = torch.maximum(m, block.amax(dim=-1, keepdim=True)) if update_max or start == 0 else m
        total = (total * torch.exp(m - m_new) if rescale else total) + torch.exp(block - m_new).sum(-1, keepdim=True)
        m = m_new
    return torch.exp(x - m) / total


def _blockwise(
    q,
    k,
    v,
    block_size,
    causal=False,
    *,
    rescale=True,
    rescale_sum=True,
    update_max=True,
    divide_per_block=False,
    local_mask=False,
    drop_remainder=False,
):
    """Blockwise attention (query blocks, one pass over key blocks each) with one step wrong (see MISTAKES)."""
    T_q, T_k = q.shape[-2], k.shape[-2]
    if drop_remainder:  # both loops stop at the last whole block
        T_q, T_k = T_q - T_q % block_size, T_k - T_k % block_size
    outputs = []
    for q0 in range(0, T_q, block_size):
        qb = q[..., q0 : min(q0 + block_size, T_q), :] / math.sqrt(q.shape[-1])
        q1 = q0 + qb.shape[-2]
        m = qb.new_full((*qb.shape[:-1], 1), float("-inf"))
        denom = qb.new_zeros((*qb.shape[:-1], 1))
        acc = qb.new_zeros((*qb.shape[:-1], v.shape[-1]))
        for k0 in range(0, min(T_k, q1) if causal else T_k, block_size):
            k1 = min(k0 + block_size, T_k)
            scores = qb @ k[..., k0:k1, :].transpose(-2, -1)
            if causal:
                rows = torch.arange(q0, q1).unsqueeze(-1) - (q0 if local_mask else 0)
                cols = torch.arange(k0, k1) - (k0 if local_mask else 0)
                scores = scores.masked_fill(cols > rows, float("-inf"))
            m_new = torch.maximum(m, scores.amax(-1, keepdim=True)) if update_max or k0 == 0 else m
            alpha = torch.exp(m - m_new)
            p = torch.exp(scores - m_new)
            denom = (denom * alpha if rescale_sum else denom) + p.sum(-1, keepdim=True)
            if divide_per_block:
                acc = acc * alpha + p @ v[..., k0:k1, :] / denom
            else:
                acc = (acc * alpha if rescale else acc) + p @ v[..., k0:k1, :]
            m = m_new
        outputs.append(acc if divide_per_block else acc / denom)
    return torch.cat(outputs, dim=-2)


def _keys_remainder_dropped(q, k, v, block_size, causal=False):
    end = k.shape[-2] - k.shape[-2] % block_size
    if end == 0:
        raise ValueError("no whole block")  # the variant has no answer here (it is skipped)
    if causal and k.shape[-2] - end == 1:
        # one key dropped, which only the last query sees: the numbers of a last diagonal block skipped as well
        # (a loop over key blocks that stops one short), so this input cannot tell which was done
        raise ValueError("ambiguous")
    return attend(q, k[..., :end, :], v[..., :end, :], allowed=allowed(q.shape[-2], end) if causal else None)


def _both_remainders_dropped(q, k, v, block_size, causal=False):
    out = _blockwise(q, k, v, block_size, causal, drop_remainder=True)
    T_q = q.shape[-2] - q.shape[-2] % block_size
    if torch.allclose(out, _plain(q[..., :T_q, :], k, v, causal), rtol=1e-6, atol=1e-9):
        # the dropped keys lie after every kept query (causal, T_q <= T_k): the numbers of the query blocks alone
        # dropped, so this input cannot tell whether the keys were dropped too
        raise ValueError("ambiguous")
    return out


EXPECTED = {
    "online_softmax": online_softmax,
    "blockwise_attention": blockwise_attention,
}
MISTAKES = {
    "online_softmax": distinct(
        online_softmax,
        {
            b.SUM_NOT_RESCALED: lambda x, n: _online_softmax(x, n, rescale=False),
            b.MAX_NOT_UPDATED: lambda x, n: _online_softmax(x, n, update_max=False),
            b.NORMALISED_PER_BLOCK: lambda x, n: _online_softmax(x, n, per_block=True),
            b.REMAINDER_DROPPED: lambda x, n: _online_softmax(x, n, drop_remainder=True),
        },
    ),
    "blockwise_attention": distinct(
        blockwise_attention,
        {
            b.ACC_NOT_RESCALED: lambda q, k, v, n, c=False: _blockwise(q, k, v, n, c, rescale=False),
            b.NOT_RESCALED: lambda q, k, v, n, c=False: _blockwise(q, k, v, n, c, rescale=False, rescale_sum=False),
            b.DIVIDED_PER_BLOCK: lambda q, k, v, n, c=False: _blockwise(q, k, v, n, c, divide_per_block=True),
            b.MAX_NOT_UPDATED: lambda q, k, v, n, c=False: _blockwise(q, k, v, n, c, update_max=False),
            b.LOCAL_CAUSAL_OFFSET: lambda q, k, v, n, c=False: _blockwise(q, k, v, n, c, local_mask=True),
            b.REMAINDER_DROPPED: _keys_remainder_dropped,
            b.REMAINDER_DROPPED_BOTH: _both_remainders_dropped,
            b.NO_CAUSAL_MASK: lambda q, k, v, n, c=False: attend(q, k, v),
            # the mistakes of every attention, whatever the blocks: no scale, a scale by the number of keys, the
            # diagonal hidden (where two give the same numbers, as at T_k == hs, none is named)
            a.MISSING_SCALE: lambda q, k, v, n, c=False: _plain(q, k, v, c, scale=1.0),
            a.SCALE_T: lambda q, k, v, n, c=False: _plain(q, k, v, c, scale=math.sqrt(k.shape[-2])),
            a.SCALE_HS_V: lambda q, k, v, n, c=False: _plain(q, k, v, c, scale=math.sqrt(v.shape[-1])),
            # the scale applied twice (to q and again to the scores) is a division by hs
            a.SCALE_NO_SQRT: lambda q, k, v, n, c=False: _plain(q, k, v, c, scale=q.shape[-1]),
            a.SCALE_TIMES: lambda q, k, v, n, c=False: _plain(q, k, v, c, scale=1.0 / math.sqrt(q.shape[-1])),
            # where block_size equals hs the answer is right, where it equals T_k or hs_v that scale's (none named)
            a.SCALE_BLOCK: lambda q, k, v, n, c=False: _plain(q, k, v, c, scale=math.sqrt(n)),
            a.OFF_BY_ONE_HIDDEN: _diagonal_hidden,
        },
    ),
}
