"""Scores as an elementwise product broadcast over (T, T, C) and summed over C; the shift with amax and no keepdim, unsqueezed."""
import torch


def softmax_naive(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x)
    return e.div(e.sum(dim).unsqueeze(dim))


def softmax_stable(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    dim = dim % x.dim()
    m = torch.amax(x, dim=dim).unsqueeze(dim)
    e = torch.exp(x - m)
    return e.div(e.sum(dim=dim).unsqueeze(dim))


def attention_scores(x: torch.Tensor) -> torch.Tensor:
    return (x.unsqueeze(-2) * x.unsqueeze(-3)).sum(dim=-1)


def attention_weights(scores: torch.Tensor) -> torch.Tensor:
    return softmax_stable(scores)


def context_vectors(x: torch.Tensor) -> torch.Tensor:
    w = attention_weights(attention_scores(x))
    return torch.matmul(w, x)
