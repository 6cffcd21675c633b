"""Hostile: hands the whole computation to torch's own multi_head_attention_forward, with torch function
handling switched off (so a function-mode recorder sees nothing) and need_weights=True (so no fused kernel
appears at the dispatcher).

expect-fail: written by hand
"""

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    *lead, T, C = x.shape
    return x.reshape(*lead, T, n_heads, C // n_heads).transpose(-3, -2)


def merge_heads(x):
    *lead, nh, T, hs = x.shape
    return x.transpose(-3, -2).reshape(*lead, T, nh * hs)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads:
            raise ValueError(f"d_out ({d_out}) must be divisible by n_heads ({n_heads})")
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        T = x.shape[-2]
        xt = x.transpose(0, 1)  # (T, B, d_in)
        d_out = self.W_query.out_features
        bias = None
        if self.W_query.bias is not None:
            bias = torch.cat([self.W_query.bias, self.W_key.bias, self.W_value.bias])
        with torch._C.DisableTorchFunction():
            out, _ = F.multi_head_attention_forward(
                xt, xt, xt, xt.shape[-1], self.n_heads, None, bias, None, None, False,
                self.dropout.p if self.training else 0.0, self.out_proj.weight, self.out_proj.bias,
                training=self.training, need_weights=True, attn_mask=~self.mask[:T, :T],
                use_separate_proj_weight=True, q_proj_weight=self.W_query.weight,
                k_proj_weight=self.W_key.weight, v_proj_weight=self.W_value.weight)
        return out.transpose(0, 1)[..., :d_out]
