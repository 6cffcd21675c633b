"""The softmaxes computed in float64 and cast back to the input dtype (for accuracy); permute for the transpose of 3-d+ inputs."""
import torch


def softmax_naive(x, dim=-1):
    e = x.double().exp()
    return (e / e.sum(dim=dim, keepdim=True)).to(x.dtype)


def softmax_stable(x, dim=-1):
    xd = x.to(torch.float64)
    e = (xd - xd.max(dim=dim, keepdim=True).values).exp()
    return (e / e.sum(dim=dim, keepdim=True)).to(x.dtype)


def attention_scores(x):
    dims = list(range(x.dim()))
    dims[-1], dims[-2] = dims[-2], dims[-1]
    return x @ x.permute(*dims)


def attention_weights(scores):
    return softmax_stable(scores, -1)


def context_vectors(x):
    return attention_weights(attention_scores(x)) @ x
