"""torch.matmul then in-place mul_ by rsqrt of a tensor in the scores' dtype."""
import torch


def scaled_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    scores = torch.matmul(q, k.transpose(-1, -2))
    scale = torch.rsqrt(torch.tensor(float(k.size(-1)), dtype=scores.dtype, device=scores.device))
    return scores.mul_(scale)
