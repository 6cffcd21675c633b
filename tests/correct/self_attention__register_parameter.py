"""register_parameter for the raw matrices (same order); a scale precomputed in __init__ as d_out ** -0.5 and multiplied;
nn.Softmax(dim=-1) as a parameter-free sub-module; torch.matmul."""
import torch
from torch import nn


class SelfAttentionParams(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        for name in ("W_query", "W_key", "W_value"):
            self.register_parameter(name, nn.Parameter(torch.rand(d_in, d_out)))
        self.scale = d_out ** -0.5
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        q = torch.matmul(x, self.W_query)
        k = torch.matmul(x, self.W_key)
        v = torch.matmul(x, self.W_value)
        return torch.matmul(self.softmax(torch.matmul(q, k.transpose(-2, -1)) * self.scale), v)


class SelfAttentionLinear(nn.Module):
    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.scale = d_out ** -0.5
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        return torch.matmul(self.softmax(torch.matmul(q, k.transpose(-2, -1)) * self.scale), v)
