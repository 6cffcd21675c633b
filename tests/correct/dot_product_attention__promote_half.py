"""CORRECT: both softmaxes computed in at least float32 (torch.promote_types: float16 and bfloat16 are widened,
float64 stays float64) and cast back with .to(x.dtype); reciprocal of the sum times the exponentials."""

import torch


def _work_dtype(x):
    return torch.promote_types(x.dtype, torch.float32)


def softmax_naive(x, dim=-1):
    e = x.to(_work_dtype(x)).exp()
    return (e * e.sum(dim, keepdim=True).reciprocal()).to(x.dtype)


def softmax_stable(x, dim=-1):
    z = x.to(_work_dtype(x))
    e = (z - z.amax(dim, keepdim=True)).exp()
    return (e * e.sum(dim, keepdim=True).reciprocal()).to(x.dtype)


def attention_scores(x):
    return x @ x.swapaxes(-1, -2)


def attention_weights(scores):
    return softmax_stable(scores, dim=-1)


def context_vectors(x):
    return attention_weights(attention_scores(x)) @ x
