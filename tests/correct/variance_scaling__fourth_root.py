"""CORRECT: q and k each divided by d_k ** 0.25 before the product (the symmetric scaling of guided-diffusion's
QKVAttention), so the product is divided by sqrt(d_k)."""
import math

import torch


def scaled_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    scale = 1 / math.sqrt(math.sqrt(q.shape[-1]))
    return (q * scale) @ (k * scale).transpose(-2, -1)
