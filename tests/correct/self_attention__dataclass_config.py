"""CORRECT: sizes kept in a frozen dataclass whose property gives the scale (multiplied, not divided);
torch.matmul with .mT; F.softmax; an assert on x.size(-1)."""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class AttnConfig:
    d_in: int
    d_out: int
    qkv_bias: bool = False

    @property
    def scale(self) -> float:
        return 1.0 / math.sqrt(self.d_out)


class SelfAttentionParams(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.cfg = AttnConfig(d_in, d_out)
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.size(-1) == self.cfg.d_in
        q = torch.matmul(x, self.W_query)
        k = torch.matmul(x, self.W_key)
        v = torch.matmul(x, self.W_value)
        attn = F.softmax(torch.matmul(q, k.mT) * self.cfg.scale, dim=-1)
        return torch.matmul(attn, v)


class SelfAttentionLinear(nn.Module):
    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False):
        super().__init__()
        self.cfg = AttnConfig(d_in, d_out, qkv_bias)
        self.W_query = nn.Linear(self.cfg.d_in, self.cfg.d_out, bias=self.cfg.qkv_bias)
        self.W_key = nn.Linear(self.cfg.d_in, self.cfg.d_out, bias=self.cfg.qkv_bias)
        self.W_value = nn.Linear(self.cfg.d_in, self.cfg.d_out, bias=self.cfg.qkv_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        attn = F.softmax(torch.matmul(q, k.mT) * self.cfg.scale, dim=-1)
        return torch.matmul(attn, v)
