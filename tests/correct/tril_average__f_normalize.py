"""Rows of a lower triangle of ones L1-normalised with F.normalize(p=1, dim=-1); the product via torch.matmul."""
import torch
import torch.nn.functional as F


def causal_mean_weights(T: int, *, device=None, dtype=None) -> torch.Tensor:
    return F.normalize(torch.ones(T, T, device=device, dtype=dtype).tril(), p=1.0, dim=-1)


def causal_mean_matmul(x: torch.Tensor) -> torch.Tensor:
    return torch.matmul(causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype), x)
