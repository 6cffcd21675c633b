"""CORRECT: any leading dims folded with reshape(-1, T, C) (a (T, d_in) input too), scores by torch.baddbmm with
beta=0 and alpha=1/sqrt(d_k) into an empty tensor, the weighted sum by bmm, reshaped back to the input's lead dims."""

import math

import torch
from torch import nn


def _attend(q, k, v):
    lead, T = q.shape[:-2], q.shape[-2]
    q3, k3, v3 = (t.reshape(-1, T, t.shape[-1]) for t in (q, k, v))
    empty = torch.empty(q3.shape[0], T, T, dtype=q3.dtype, device=q3.device)
    scores = torch.baddbmm(empty, q3, k3.transpose(1, 2), beta=0.0, alpha=1.0 / math.sqrt(k3.shape[-1]))
    out = torch.bmm(torch.softmax(scores, dim=-1), v3)
    return out.reshape(*lead, T, v.shape[-1])


class SelfAttentionParams(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        return _attend(x @ self.W_query, x @ self.W_key, x @ self.W_value)


class SelfAttentionLinear(nn.Module):
    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return _attend(self.W_query(x), self.W_key(x), self.W_value(x))
