"""CORRECT: projections with torch.tensordot(x, W, dims=1) and F.linear(x, W.T) on the raw matrices; the softmax dim
given as a positive index (scores.dim() - 1); the scale stored in __init__ as 1 / math.sqrt(d_out)."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class SelfAttentionParams(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))
        self.inv_scale = 1 / math.sqrt(d_out)

    def forward(self, x):
        q = torch.tensordot(x, self.W_query, dims=1)
        k = F.linear(x, self.W_key.T)
        v = torch.tensordot(x, self.W_value, dims=([x.dim() - 1], [0]))
        scores = torch.matmul(q, k.transpose(x.dim() - 2, x.dim() - 1)) * self.inv_scale
        return torch.softmax(scores, dim=scores.dim() - 1) @ v


class SelfAttentionLinear(nn.Module):
    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.inv_scale = 1 / math.sqrt(d_out)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.matmul(q, k.transpose(x.dim() - 2, x.dim() - 1)) * self.inv_scale
        return torch.softmax(scores, dim=scores.dim() - 1) @ v
