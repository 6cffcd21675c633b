"""Stage 10 - Blockwise attention: never build the T x T matrix.

Every stage so far computed all T x T scores at once. That matrix is the
memory bill of attention: for T = 32 768 tokens it holds a billion numbers per
head, far more than the queries, keys and values themselves (T x hs each).
Yet each output row only needs a weighted sum of the values. If the keys and
values are visited in blocks of ``block_size`` and each block's contribution is
added to a running result, only a (T_q, block_size) slice of the scores ever
exists: memory drops from T^2 to T * block_size per head, and nothing is
approximated. (This is the idea behind FlashAttention, Dao et al. 2022.)

The obstacle is the softmax: its denominator needs every score of the row, and
the max subtracted for stability (stage 4) is known only after the last block.
The online softmax (Milakov and Gimelshein, 2018) keeps, for each row, a
running maximum m and a running sum l of exp(score - m). When a new block
raises the maximum from m to m', everything summed so far was computed against
the old m, and multiplying it by exp(m - m') restates it against the new one:

    m' = max(m, max of the block)
    l' = l * exp(m - m') + sum(exp(block - m'))

Attention carries one more running quantity, the unnormalised output
acc = sum(exp(score - m) * v), rescaled by the same factor. Dividing by l
happens once, at the end, when l is complete.

With a causal mask (query t sees keys 0..t, aligned top-left as in stage 7),
a key block that starts after the last query of a query block is entirely in
the future: its weights would all be zero, so it is skipped instead of being
computed and masked. Processing queries in blocks too, query block i needs key
blocks 0..i only, about half of all pairs: causal attention costs half.
"""

import math

import torch


def online_softmax(x: torch.Tensor, block_size: int) -> torch.Tensor:
    """Softmax over the last dimension, reading it ``block_size`` entries at a time.

    One pass over the blocks keeps, for every row, a running maximum and a running
    sum of exp(x - maximum), rescaling the sum whenever the maximum grows; the
    normalised values are computed from the final maximum and sum.

    Args:
        x: (..., N) logits.
        block_size: entries of the last dimension read per step (the last block
            may be shorter).

    Returns:
        (..., N) tensor equal to ``torch.softmax(x, dim=-1)``, finite for logits
        as large as +-1e4.
    """
    ### BEGIN SOLUTION  # stub: a running maximum and a running sum of exp(x - max) over the blocks of the last dim (rescale the sum when the max grows), then exp(x - max) / sum
    N = x.shape[-1]
    m = x.new_full((*x.shape[:-1], 1), float("-inf"))  # running maximum of each row
    total = x.new_zeros((*x.shape[:-1], 1))  # running sum of exp(x - m)
    for start in range(0, N, block_size):  # the last block may be shorter
        block = x[..., start:start + block_size]
        m_new = torch.maximum(m, block.amax(dim=-1, keepdim=True))
        # the sum so far was taken against the old maximum: restate it against the new one
        total = total * torch.exp(m - m_new) + torch.exp(block - m_new).sum(dim=-1, keepdim=True)
        m = m_new
    return torch.exp(x - m) / total
    ### END SOLUTION


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
