"""CORRECT: an additive float mask (0 where visible, -inf on the future, in the scores' dtype) added to the scores,
as Hugging Face models do; the buffer built as ~triu(diagonal=1); x.size() unpacking."""
import math

import torch
from torch import nn


def _additive(visible: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return torch.zeros(visible.shape, dtype=dtype, device=visible.device).masked_fill(~visible, float("-inf"))


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    T_q, T_k = q.size(-2), k.size(-2)
    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)) + _additive(visible, q.dtype)
    return torch.softmax(scores, dim=-1) @ v


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in: int, head_size: int, context_length: int, dropout: float = 0.0, qkv_bias: bool = False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        future = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", ~future)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.size()
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.size(-1))
        scores = scores + _additive(self.mask[:T, :T], scores.dtype)
        weights = self.dropout(torch.softmax(scores, dim=-1))
        return weights @ v
