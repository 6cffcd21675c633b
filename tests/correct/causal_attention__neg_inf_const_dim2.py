"""CORRECT: module code written for its (B, T, d_in) contract: softmax(dim=2), keys.permute(0, 2, 1), a module-level
NEG_INF = -float('inf') constant; causal_attention with masked_fill on a mask made by logical_not(triu(1)) and the
scale as torch.tensor(hs).sqrt() in the scores' dtype."""

import torch
from torch import nn

NEG_INF = -float("inf")


def causal_attention(q, k, v):
    future = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).triu(diagonal=1)
    scale = torch.tensor(q.shape[-1], dtype=q.dtype, device=q.device).sqrt()
    scores = (q @ k.transpose(-2, -1) / scale).masked_fill(future, NEG_INF)
    return scores.softmax(-1) @ v


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.head_size = head_size
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.logical_not(torch.ones(context_length, context_length, dtype=torch.bool).triu(1))
        )

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.bmm(q, k.permute(0, 2, 1)) / self.head_size**0.5
        scores = scores.masked_fill(self.mask[:T, :T] == False, NEG_INF)  # noqa: E712
        weights = torch.softmax(scores, dim=2)
        return torch.bmm(self.dropout(weights), v)
