import torch


def softmax_naive(x, dim=-1):
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


def softmax_stable(x, dim=-1):
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def attention_scores(x):
    return x @ x.transpose(-2, -1)


def attention_weights(scores):
    return softmax_stable(scores, dim=-1)


def context_vectors(x):
    return attention_weights(attention_scores(x)) @ x
