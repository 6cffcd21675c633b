"""CORRECT: the scale as a tensor built in the scores' own dtype and device (scores.new_full) from math.pow(d_k,
-0.5), multiplied in; transpose written as k.transpose(-1, -2)."""

import math

import torch


def scaled_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    scores = torch.matmul(q, k.transpose(-1, -2))
    scale = scores.new_full((), math.pow(q.shape[-1], -0.5))
    return scores * scale
