"""CORRECT: Whisper's scaling, q and k each multiplied by hs ** -0.25 (together 1 / sqrt(hs)); the module registers
its mask buffer as asked but builds the (T, T) pattern in forward with device=x.device (the same values)."""

import torch
from torch import nn


def _attend(q, k, v, visible):
    s = q.shape[-1] ** -0.25
    scores = (q * s) @ (k * s).transpose(-2, -1)
    scores = scores.masked_fill(~visible, float("-inf"))
    return scores.softmax(dim=-1), v


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    visible = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril_()
    w, v = _attend(q, k, v, visible)
    return w @ v


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in: int, head_size: int, context_length: int, dropout: float = 0.0, qkv_bias: bool = False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[-2]
        visible = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        w, v = _attend(self.W_query(x), self.W_key(x), self.W_value(x), visible)
        return self.dropout(w) @ v
