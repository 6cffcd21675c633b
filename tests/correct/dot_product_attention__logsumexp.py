"""CORRECT: softmax through logsumexp, mT for the transpose, einsum for the weighted sum."""
import torch


def softmax_naive(x, dim=-1):
    e = x.exp()
    return e / e.sum(dim, keepdim=True)


def softmax_stable(x, dim=-1):
    return torch.exp(x - torch.logsumexp(x, dim=dim, keepdim=True))


def attention_scores(x):
    return x @ x.mT


def attention_weights(scores):
    return softmax_stable(scores, dim=-1)


def context_vectors(x):
    return torch.einsum("...ts,...sc->...tc", attention_weights(attention_scores(x)), x)
