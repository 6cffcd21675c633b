"""CORRECT: a shared base class with the attention in one method and each subclass only projecting; the softmax as
exp(scores - logsumexp(scores)); the scale a torch.rsqrt of a tensor in the scores' dtype, applied to q first."""

import torch
from torch import nn


class _Attention(nn.Module):
    def project(self, x):
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.project(x)
        q = q * torch.rsqrt(torch.tensor(k.shape[-1], dtype=q.dtype, device=q.device))
        scores = q @ k.transpose(-1, -2)
        weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
        return weights @ v


class SelfAttentionParams(_Attention):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def project(self, x):
        return x @ self.W_query, x @ self.W_key, x @ self.W_value


class SelfAttentionLinear(_Attention):
    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def project(self, x):
        return self.W_query(x), self.W_key(x), self.W_value(x)
