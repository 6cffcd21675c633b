# Generated from solutions/04_dot_product_attention.py by `make exercises`; edit the solution, not this file.
"""Stage 4 - Letting the data choose the weights: dot-product attention.

So far every visible step got the same weight. Attention lets each position
decide how much every other position matters to it. The simplest measure of
"how much does x_s matter to x_t" is the dot product x_t . x_s: large when the
two vectors point the same way, small or negative when they do not. For a
whole sequence, all T * T dot products come from one matrix product,
``x @ x^T``, giving a (T, T) table of scores.

Softmax then turns each row of scores into weights that are positive and sum
to 1, and each output (a "context vector") is the weighted average of the
inputs: ``weights @ x``. There are no learned parameters yet and no scaling;
stage 6 adds both.

Softmax needs care in floating point. exp(x) overflows to inf once x is above
about 88 in float32 (about 11 in float16), and inf / inf is NaN. The fix uses
the fact that softmax does not change when the same constant c is subtracted
from every logit, because the factor exp(-c) cancels between numerator and
denominator. Taking c = the row maximum makes the largest exponent exp(0) = 1:
nothing can overflow, and the denominator is at least 1, so nothing divides by
zero either. This is what ``torch.softmax`` does internally.
"""

import torch


def softmax_naive(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax straight from the definition: exp(x) divided by its sum along ``dim``.

    Args:
        x: tensor of logits, any shape.
        dim: the dimension that should sum to 1.

    Returns:
        Tensor shaped like ``x``. Overflows (inf / inf = NaN) for large logits.
    """
    # TODO: Implement softmax_naive: return exp(x) normalised so that it sums to 1 along
    #       dim
    raise NotImplementedError("Implement softmax_naive: return exp(x) normalised so that it sums to 1 along dim")


def softmax_stable(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax that subtracts the maximum along ``dim`` before exponentiating.

    Args:
        x: tensor of logits, any shape.
        dim: the dimension that should sum to 1.

    Returns:
        Tensor shaped like ``x``, equal to ``torch.softmax(x, dim)`` and finite
        even for logits of +-1e4.
    """
    # TODO: Implement softmax_stable: like softmax_naive, but first shift x by its
    #       maximum along dim so that exp cannot overflow
    raise NotImplementedError("Implement softmax_stable: like softmax_naive, but first shift x by its maximum along dim so that exp cannot overflow")


def attention_scores(x: torch.Tensor) -> torch.Tensor:
    """Dot product of every position with every position.

    Args:
        x: (..., T, C) sequences.

    Returns:
        (..., T, T) scores with ``scores[..., t, s] = x[..., t, :] . x[..., s, :]``.
    """
    # TODO: Implement attention_scores: return the (..., T, T) table of dot products
    #       between every pair of positions
    raise NotImplementedError("Implement attention_scores: return the (..., T, T) table of dot products between every pair of positions")


def attention_weights(scores: torch.Tensor) -> torch.Tensor:
    """Normalise every row of scores into attention weights with softmax.

    Args:
        scores: (..., T, T) attention scores.

    Returns:
        (..., T, T) weights, positive, each row (last dim) summing to 1.
    """
    # TODO: Implement attention_weights: normalise every row (the last dim) of scores
    #       with softmax
    raise NotImplementedError("Implement attention_weights: normalise every row (the last dim) of scores with softmax")


def context_vectors(x: torch.Tensor) -> torch.Tensor:
    """Replace every position by the attention-weighted average of all positions.

    Args:
        x: (..., T, C) sequences.

    Returns:
        (..., T, C) context vectors: ``attention_weights(attention_scores(x)) @ x``.
    """
    # TODO: Implement context_vectors: average the inputs x with the attention weights
    #       computed from x itself
    raise NotImplementedError("Implement context_vectors: average the inputs x with the attention weights computed from x itself")
