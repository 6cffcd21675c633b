"""CORRECT: the scale as a float64 0-d tensor (torch.as_tensor(d_k, dtype=torch.float64).rsqrt()): a 0-d tensor does
not change the scores' dtype, and float64 keeps the scale exact; in-place mul_ on the fresh product."""

import torch


def scaled_scores(q, k):
    scale = torch.as_tensor(q.shape[-1], dtype=torch.float64).rsqrt()
    return (q @ k.transpose(-2, -1)).mul_(scale)
