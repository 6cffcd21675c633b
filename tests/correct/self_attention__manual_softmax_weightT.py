"""Linear projections written as x @ W.weight.T + bias (the bias added when present); the softmax written out
with max-subtraction; scale by math.sqrt of W_query's out size."""
import math

import torch
from torch import nn


def _softmax(s):
    s = s - s.amax(dim=-1, keepdim=True)
    e = torch.exp(s)
    return e / e.sum(dim=-1, keepdim=True)


def _attend(q, k, v):
    return _softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])) @ v


class SelfAttentionParams(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        return _attend(x @ self.W_query, x @ self.W_key, x @ self.W_value)


def _project(layer: nn.Linear, x):
    y = x @ layer.weight.T
    if layer.bias is not None:
        y = y + layer.bias
    return y


class SelfAttentionLinear(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return _attend(_project(self.W_query, x), _project(self.W_key, x), _project(self.W_value, x))
