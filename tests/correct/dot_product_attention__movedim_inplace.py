"""CORRECT: the softmax dim moved last with movedim and back; in-place sub_/exp_/div_ on the fresh shifted copy;
a detached maximum (it cancels anyway); sums without keepdim, unsqueezed back."""
import torch


def softmax_naive(x, dim=-1):
    z = x.movedim(dim, -1).exp()
    z = z / z.sum(-1).unsqueeze(-1)
    return z.movedim(-1, dim)


def softmax_stable(x, dim=-1):
    z = x.movedim(dim, -1)
    m = z.amax(-1, keepdim=True).detach()
    e = z - m  # a new tensor: the in-place ops below never touch x
    e.exp_()
    e.div_(e.sum(-1, keepdim=True))
    return e.movedim(-1, dim)


def attention_scores(x):
    return torch.matmul(x, x.transpose(-1, -2))


def attention_weights(scores):
    return softmax_stable(scores)


def context_vectors(x):
    return torch.matmul(attention_weights(attention_scores(x)), x)
