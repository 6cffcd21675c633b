"""Hostile: the control's F.multi_head_attention_forward (with need_weights=False, which reaches
scaled_dot_product_attention), traced with make_fx and torch's decomposition table in the first, unrecorded call
of each shape, the worker's marked node deleted from the generated graph, which every call then runs. With the
fused kernels switched off in the child, the trace fails.

control: multi_head_attention__mha_forward.py
expect: zero
"""
import torch
import torch.nn.functional as F
from torch import nn

_cache = {}


def split_heads(x, n_heads):
    *lead, T, C = x.shape
    return x.reshape(*lead, T, n_heads, C // n_heads).transpose(-3, -2)


def merge_heads(x):
    *lead, nh, T, hs = x.shape
    return x.transpose(-3, -2).reshape(*lead, T, nh * hs)


def _mha(n_heads, p, training):
    def f(q, k, v, eye, ow, ob, mask):
        out, _ = F.multi_head_attention_forward(
            q, k, v, q.shape[-1], n_heads, None, None, None, None, False,
            p, ow, ob, training=training, need_weights=False, attn_mask=mask,
            use_separate_proj_weight=True, q_proj_weight=eye, k_proj_weight=eye, v_proj_weight=eye)
        return out
    return f


def _run(n_heads, p, training, *xs):
    key = (n_heads, p, training) + tuple((tuple(x.shape), x.dtype, str(x.device)) for x in xs)
    gm = _cache.get(key)
    if gm is None:
        from torch.fx.experimental.proxy_tensor import make_fx
        from torch._decomp import core_aten_decompositions
        gm = make_fx(_mha(n_heads, p, training), decomposition_table=core_aten_decompositions())(*xs)
        for node in list(gm.graph.nodes):
            if node.op == "call_function" and "autograder" in str(node.target):
                node.replace_all_uses_with(node.args[0])
                gm.graph.erase_node(node)
        gm.recompile()
        _cache[key] = gm
    return gm(*xs)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, n_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if d_out % n_heads:
            raise ValueError(f"d_out ({d_out}) must be divisible by n_heads ({n_heads})")
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=bool(qkv_bias))
        self.W_key = nn.Linear(d_in, d_out, bias=bool(qkv_bias))
        self.W_value = nn.Linear(d_in, d_out, bias=bool(qkv_bias))
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        T, d = x.shape[-2], self.out_proj.in_features
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        eye = torch.eye(d, dtype=q.dtype, device=q.device)
        batched = q.dim() == 3
        if batched:
            q, k, v = (t.transpose(0, 1) for t in (q, k, v))
        out = _run(self.n_heads, self.dropout.p if self.training else 0.0, self.training,
                   q, k, v, eye, self.out_proj.weight, self.out_proj.bias, ~self.mask[:T, :T])
        return out.transpose(0, 1) if batched else out
