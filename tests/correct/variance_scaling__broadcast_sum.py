"""CORRECT: each dot product as an elementwise product broadcast over (..., T_q, T_k, d_k) and summed over d_k, then
divided by math.sqrt of the feature size."""

import math


def scaled_scores(q, k):
    products = q.unsqueeze(-2) * k.unsqueeze(-3)  # (..., T_q, 1, d_k) * (..., 1, T_k, d_k)
    return products.sum(dim=-1) / math.sqrt(q.shape[-1])
