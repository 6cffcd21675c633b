"""Leading dims folded with flatten(0, -3) (a (T, d_in) input unsqueezed first), bmm for scores and weighted sum,
unflattened back; scale by the parameter's shape."""
import math

import torch
from torch import nn


def _attend_folded(q, k, v):
    lead = q.shape[:-2]
    if q.dim() == 2:
        q, k, v = q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0)
    else:
        q, k, v = q.flatten(0, -3), k.flatten(0, -3), v.flatten(0, -3)
    w = torch.softmax(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1]), dim=-1)
    out = torch.bmm(w, v)
    return out.reshape(*lead, *out.shape[-2:])


class SelfAttentionParams(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        return _attend_folded(x @ self.W_query, x @ self.W_key, x @ self.W_value)


class SelfAttentionLinear(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return _attend_folded(self.W_query(x), self.W_key(x), self.W_value(x))
