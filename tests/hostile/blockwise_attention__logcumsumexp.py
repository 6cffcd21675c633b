"""Hostile: online_softmax takes the whole row's normaliser in one op, torch.logcumsumexp (its last column is the
row's logsumexp), then divides block by block so that the op count grows with the number of blocks: no running
maximum, no running sum.

control: blockwise_attention__logsumexp.py
expect-fail: online_softmax reads the row block by block
"""

import math

import torch


def online_softmax(x: torch.Tensor, block_size: int) -> torch.Tensor:
    """Attack: the whole row's normaliser in ONE op, torch.logcumsumexp (its last column is logsumexp of the row),
    which the "no torch.softmax / logsumexp" word check does not name; the row is then only exponentiated block by
    block, so the op count grows with the number of blocks. No running maximum, no running sum, no rescaling."""
    lse = torch.logcumsumexp(x, dim=-1)[..., -1:]  # whole-row log-normaliser at once
    return torch.cat([torch.exp(x[..., s:s + block_size] - lse) for s in range(0, x.shape[-1], block_size)], dim=-1)


def blockwise_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_size: int, causal: bool = False
) -> torch.Tensor:
    """Scaled dot-product attention computed one block of keys and values at a time.

    For each block of queries, one pass over the key/value blocks keeps, per query, a
    running maximum, a running denominator and an output accumulator; both are
    rescaled by exp(old max - new max) when the maximum grows, and the accumulator is
    divided by the denominator once, at the end. No tensor larger than
    (T_q, block_size) per batch and head is created. With ``causal=True`` query t sees
    keys 0..t (aligned top-left, like ``scaled_dot_product_attention(is_causal=True)``)
    and key blocks wholly in the future of a query block are skipped, not masked.

    Args:
        q: (..., T_q, hs) queries.
        k: (..., T_k, hs) keys.
        v: (..., T_k, hs_v) values.
        block_size: positions per block (the last block may be shorter).
        causal: whether query t may only see keys 0..t.

    Returns:
        (..., T_q, hs_v) tensor equal to softmax(q k^T / sqrt(hs)) v.
    """
    ### BEGIN SOLUTION  # stub: loop over query blocks; for each, one pass over the key/value blocks (skipping those wholly in the future when causal) with a running max, denominator and accumulator rescaled when the max grows; divide at the end
    T_q, T_k = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    outputs = []
    for q0 in range(0, T_q, block_size):
        q_blk = q[..., q0:q0 + block_size, :] * scale  # (..., bq, hs)
        q1 = q0 + q_blk.shape[-2]
        m = q_blk.new_full((*q_blk.shape[:-1], 1), float("-inf"))  # running maximum per query
        denom = q_blk.new_zeros((*q_blk.shape[:-1], 1))  # running sum of exp(score - m)
        acc = q_blk.new_zeros((*q_blk.shape[:-1], v.shape[-1]))  # running sum of exp(score - m) * v
        # causal: keys after this block's last query (q1 - 1) are in every one of its queries' future
        k_end = min(T_k, q1) if causal else T_k
        for k0 in range(0, k_end, block_size):
            k_blk, v_blk = k[..., k0:k0 + block_size, :], v[..., k0:k0 + block_size, :]
            k1 = k0 + k_blk.shape[-2]
            scores = q_blk @ k_blk.transpose(-2, -1)  # (..., bq, bk): the only scores that exist
            if causal and k1 - 1 > q0:  # the block reaches past some query: hide its future keys
                rows = torch.arange(q0, q1, device=q.device).unsqueeze(-1)
                cols = torch.arange(k0, k1, device=q.device)
                scores = scores.masked_fill(cols > rows, float("-inf"))
            m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
            rescale = torch.exp(m - m_new)  # restates what was summed against the old maximum
            p = torch.exp(scores - m_new)
            denom = denom * rescale + p.sum(dim=-1, keepdim=True)
            acc = acc * rescale + p @ v_blk
            m = m_new
        outputs.append(acc / denom)  # divided once, when the denominator is complete
    return torch.cat(outputs, dim=-2)
    ### END SOLUTION
