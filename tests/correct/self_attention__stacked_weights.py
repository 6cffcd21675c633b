"""CORRECT: the three projections computed in one product: the raw matrices stacked (torch.stack) into a
(3, d_in, d_out) tensor and unbound after x @ W; for nn.Linear the three weights (and biases, when present)
concatenated and the result chunked, which keeps the three named layers and their gradients."""
import math

import torch
from torch import nn


class SelfAttentionParams(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        W = torch.stack([self.W_query, self.W_key, self.W_value])  # (3, d_in, d_out)
        q, k, v = (x.unsqueeze(-3) @ W).unbind(-3)  # (..., 1, T, d_in) @ (3, d_in, d_out)
        scores = q @ k.transpose(-2, -1) / math.sqrt(W.shape[-1])
        return scores.softmax(dim=-1) @ v


class SelfAttentionLinear(nn.Module):
    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        layers = (self.W_query, self.W_key, self.W_value)
        weight = torch.cat([m.weight for m in layers])  # (3 d_out, d_in)
        bias = torch.cat([m.bias for m in layers]) if self.W_query.bias is not None else None
        q, k, v = nn.functional.linear(x, weight, bias).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        return scores.softmax(dim=-1) @ v
