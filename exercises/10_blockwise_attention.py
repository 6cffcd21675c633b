# Generated from solutions/10_blockwise_attention.py by `make exercises`; edit the solution, not this file.
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
    # TODO: Implement online_softmax: a running maximum and a running sum of exp(x -
    #       max) over the blocks of the last dim (rescale the sum when the max grows),
    #       then exp(x - max) / sum
    raise NotImplementedError("Implement online_softmax: a running maximum and a running sum of exp(x - max) over the blocks of the last dim (rescale the sum when the max grows), then exp(x - max) / sum")


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
    # TODO: Implement blockwise_attention: loop over query blocks; for each, one pass
    #       over the key/value blocks (skipping those wholly in the future when causal)
    #       with a running max, denominator and accumulator rescaled when the max grows;
    #       divide at the end
    raise NotImplementedError("Implement blockwise_attention: loop over query blocks; for each, one pass over the key/value blocks (skipping those wholly in the future when causal) with a running max, denominator and accumulator rescaled when the max grows; divide at the end")
