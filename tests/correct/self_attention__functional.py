"""CORRECT: F.softmax, scale folded into the queries, matmul with transpose(1, 2)-free mT."""
import torch
import torch.nn.functional as F
from torch import nn


class SelfAttentionParams(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        q = (x @ self.W_query) / self.W_key.shape[-1] ** 0.5
        weights = F.softmax(q @ (x @ self.W_key).mT, dim=-1)
        return weights @ (x @ self.W_value)


class SelfAttentionLinear(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = torch.einsum("...td,...sd->...ts", queries, keys)
        return F.softmax(scores / keys.shape[-1] ** 0.5, dim=-1) @ values
