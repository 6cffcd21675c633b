"""CORRECT: the keys scaled instead of the queries (q @ (k * d_k ** -0.5)^T), d_k read from k.size(-1), the
transpose with permute of the last two dims."""

import torch


def scaled_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    d_k = k.size(-1)
    dims = list(range(k.dim()))
    dims[-2], dims[-1] = dims[-1], dims[-2]
    return torch.matmul(q, (k * d_k**-0.5).permute(*dims))
