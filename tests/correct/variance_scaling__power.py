"""CORRECT: einsum for the scores, multiplied by d_k ** -0.5."""
import torch


def scaled_scores(q, k):
    return torch.einsum("...qd,...kd->...qk", q, k) * q.shape[-1] ** -0.5
