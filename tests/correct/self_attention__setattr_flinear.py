"""CORRECT: the three parameters created in a loop with setattr (order query, key, value kept); einsum with the
(d_in, d_out) matrices; the Linear module's projections written as F.linear(x, layer.weight, layer.bias)."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class SelfAttentionParams(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        for name in ("W_query", "W_key", "W_value"):
            setattr(self, name, nn.Parameter(torch.rand(d_in, d_out)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = torch.einsum("...ti,io->...to", x, self.W_query)
        k = torch.einsum("...ti,io->...to", x, self.W_key)
        v = torch.einsum("...ti,io->...to", x, self.W_value)
        w = torch.softmax(torch.einsum("...td,...sd->...ts", q, k) / math.sqrt(k.shape[-1]), dim=-1)
        return torch.einsum("...ts,...sd->...td", w, v)


class SelfAttentionLinear(nn.Module):
    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (F.linear(x, m.weight, m.bias) for m in (self.W_query, self.W_key, self.W_value))
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), dim=-1)
        return w @ v
