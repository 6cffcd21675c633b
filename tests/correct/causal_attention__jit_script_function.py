"""CORRECT: causal_attention itself is a @torch.jit.script function (type-annotated, math.sqrt and float('-inf')
inside TorchScript); the module calls a scripted helper with its sliced mask."""
import math

import torch
from torch import nn


@torch.jit.script
def _masked_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, visible: torch.Tensor) -> torch.Tensor:
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(float(q.size(-1)))
    scores = scores.masked_fill(torch.logical_not(visible), float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


@torch.jit.script
def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    visible = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool, device=q.device).tril()
    return _masked_attention(q, k, v, visible)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in: int, head_size: int, context_length: int, dropout: float = 0.0, qkv_bias: bool = False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))
        return self.dropout(torch.softmax(scores, dim=-1)) @ v
