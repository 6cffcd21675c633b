# Generated from solutions/05_variance_scaling.py by `make exercises`; edit the solution, not this file.
"""Stage 5 - Why attention scores are divided by sqrt(d_k).

An attention score is a dot product of a query and a key, each with d_k
features:

    score = q_1 k_1 + q_2 k_2 + ... + q_{d_k} k_{d_k}

Suppose, as at initialisation, every q_i and k_i is an independent draw with
mean 0 and variance 1. Each product q_i k_i then has mean 0 and variance
E[q_i^2] E[k_i^2] = 1, and the variance of a sum of independent terms is the
sum of their variances. So the score has variance d_k: with d_k = 64 the
scores typically spread over about +-8, with d_k = 256 about +-16.

That matters because softmax is sensitive to scale. Spread-out logits make it
saturate: nearly all the weight lands on the single largest score, so each
position attends to almost exactly one other, and the gradients through the
other entries almost vanish. Dividing the scores by sqrt(d_k) divides their
variance by d_k, bringing it back to about 1 for every head size, so the
softmax starts out soft and trainable. This is the "scaled" in "scaled
dot-product attention".
"""

import math

import torch


def scaled_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Dot-product scores of queries against keys, divided by sqrt(d_k).

    Args:
        q: (..., T_q, d_k) queries.
        k: (..., T_k, d_k) keys.

    Returns:
        (..., T_q, T_k) tensor ``q @ k^T / sqrt(d_k)``, where d_k is the last
        dimension of q and k. Unit-Gaussian q and k give scores of variance ~1.
    """
    # TODO: Implement scaled_scores: return the (..., T_q, T_k) query-key dot products
    #       divided by sqrt(d_k)
    raise NotImplementedError("Implement scaled_scores: return the (..., T_q, T_k) query-key dot products divided by sqrt(d_k)")
