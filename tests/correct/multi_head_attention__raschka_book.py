"""CORRECT: the book's MultiHeadAttention: keys.view(b, num_tokens, num_heads, head_dim).transpose(1, 2),
queries @ keys.transpose(2, 3), attn_scores.masked_fill_ with -torch.inf, softmax of attn_scores / head_dim ** 0.5,
context_vec.transpose(1, 2).contiguous().view(b, num_tokens, d_out); split_heads/merge_heads for any leading dims."""

import torch
import torch.nn as nn


def split_heads(x, n_heads):
    head_dim = x.shape[-1] // n_heads
    return x.view(*x.shape[:-1], n_heads, head_dim).transpose(-3, -2)


def merge_heads(x):
    return x.transpose(-3, -2).contiguous().view(*x.shape[:-3], x.shape[-2], x.shape[-3] * x.shape[-1])


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads != 0:
            raise ValueError("d_out must be divisible by n_heads")
        self.d_out = d_out
        self.num_heads = n_heads
        self.head_dim = d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", ~torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = ~self.mask[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)
        return context_vec
