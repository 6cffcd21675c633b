"""Control: MultiHeadAttention.forward calls torch's F.multi_head_attention_forward plainly (no trick): the
stage earns nothing."""
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
        self.W_query = nn.Linear(d_in, d_out, bias=bool(qkv_bias))
        self.W_key = nn.Linear(d_in, d_out, bias=bool(qkv_bias))
        self.W_value = nn.Linear(d_in, d_out, bias=bool(qkv_bias))
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def _torch(self, x):
        T, d = x.shape[-2], self.out_proj.in_features
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        eye = torch.eye(d, dtype=q.dtype, device=q.device)
        batched = q.dim() == 3
        if batched:
            q, k, v = (t.transpose(0, 1) for t in (q, k, v))
        out, _ = F.multi_head_attention_forward(
            q, k, v, d, self.n_heads, None, None, None, None, False,
            self.dropout.p, self.out_proj.weight, self.out_proj.bias, training=self.training,
            need_weights=False, attn_mask=~self.mask[:T, :T], use_separate_proj_weight=True,
            q_proj_weight=eye, k_proj_weight=eye, v_proj_weight=eye)
        return out.transpose(0, 1) if batched else out

    def forward(self, x):
        return self._torch(x)
