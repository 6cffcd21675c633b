"""Hostile: the attention comes from torch's own Python reference of torch.onnx.ops.attention (the function
attention_23 in torch/onnx/ops/_impl.py), reached as a plain function through torch's ONNX decomposition table;
qk_matmul_output_mode=1 takes its ordinary-op path (scores, tril mask, softmax, @ v) instead of SDPA, so no fused
kernel runs. The recorder finds torch's attention code on the stack of any op it records: by file, by function,
and any function of torch whose name says attention.

control: causal_attention__sdpa.py
expect: zero
"""

import torch
import torch.onnx.ops._impl as _impl
from torch import nn

_ATT = _impl.ONNX_ATEN_DECOMP_TABLE[torch.ops.onnx.Attention.opset23]


def causal_attention(q, k, v):
    lead = q.shape[:-2]
    q4, k4, v4 = (t.reshape(-1, 1, *t.shape[-2:]) for t in (q, k, v))
    out = _ATT(q4, k4, v4, is_causal=True, qk_matmul_output_mode=1)[0]
    return out.reshape(*lead, q.shape[-2], v.shape[-1])


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        if x.shape[-2] > self.mask.shape[0]:
            raise ValueError("the sequence is longer than context_length")
        return causal_attention(self.W_query(x), self.W_key(x), self.W_value(x))
