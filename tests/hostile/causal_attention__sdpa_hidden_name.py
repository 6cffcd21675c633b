"""Hostile: reaches scaled_dot_product_attention without writing its name: the attribute name is assembled
at run time and the call is made from a string through exec, on a worker thread.

control: causal_attention__sdpa.py
expect-fail: written by hand
expect-fail: causal_attention: equals scaled_dot_product_attention
"""

import threading

import torch
import torch.nn.functional as F
from torch import nn

_NAME = "scaled_dot_" + "product_" + "attention"


def causal_attention(q, k, v):
    box = {}

    def work():
        namespace = {"fn": getattr(F, _NAME), "q": q, "k": k, "v": v}
        exec("out = fn(q, k, v, is_causal=True)", namespace)
        box["out"] = namespace["out"]

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return box["out"]


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        return causal_attention(self.W_query(x), self.W_key(x), self.W_value(x))
