"""CORRECT: stage 6 is not written by hand, so F.scaled_dot_product_attention (no mask, its default scale
1 / sqrt(q.size(-1)) = 1 / sqrt(d_out)) is allowed for SelfAttentionLinear; SelfAttentionParams scales q and k each by
d_out ** -0.25 (Whisper's split of the scale)."""

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
        s = self.W_key.shape[1] ** -0.25
        q, k = (x @ self.W_query) * s, (x @ self.W_key) * s
        return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ (x @ self.W_value)


class SelfAttentionLinear(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return F.scaled_dot_product_attention(self.W_query(x), self.W_key(x), self.W_value(x))
