"""Stage 8: multi-head attention, head split and merge.

``multi_head_attention(x, state, n_heads)`` takes the weights in the learner's ``state_dict`` layout:
``W_query.weight`` (d_out, d_in) (and ``.bias`` with qkv_bias), the same for ``W_key`` and ``W_value``, and
``out_proj.weight`` (d_out, d_out), ``out_proj.bias`` (d_out,).
"""

import math

import torch
import torch.nn.functional as F

from autograder.graders import attention as m

from .causal_attention import allowed, in_context
from .self_attention import attend, project_linear, reference_grad, without_biases


def split_heads(x, n_heads):
    *lead, T, C = x.shape
    return x.reshape(*lead, T, n_heads, C // n_heads).transpose(-3, -2)  # (..., nh, T, hs)


def merge_heads(x):
    *lead, nh, T, hs = x.shape
    return x.transpose(-3, -2).reshape(*lead, T, nh * hs)  # (..., T, nh * hs)


def _split_no_transpose(x, n_heads):  # view(B, nh, T, hs): each "head" gets a block of the flattened (T, C)
    *lead, T, C = x.shape
    return x.reshape(*lead, n_heads, T, C // n_heads)


def _split_interleaved(x, n_heads):  # view(B, T, hs, nh): head h gets features h, h + nh, h + 2 nh, ...
    *lead, T, C = x.shape
    return x.reshape(*lead, T, C // n_heads, n_heads).movedim(-1, -3)


def _merge_no_transpose(x):
    *lead, nh, T, hs = x.shape
    return x.reshape(*lead, T, nh * hs)


def _merge_interleaved(x):
    *lead, nh, T, hs = x.shape
    return x.movedim(-3, -1).reshape(*lead, T, hs * nh)


def _mha(x, state, n_heads, *, split=split_heads, merge=merge_heads, out_proj=True, scale=None, **attend_kw):
    T = x.shape[-2]
    q, k, v = (split(t, n_heads) for t in project_linear(x, state))  # (B, nh, T, hs)
    kw = {"allowed": allowed(T, T), **attend_kw}
    out = merge(attend(q, k, v, scale=scale, **kw))  # (B, T, d_out)
    return F.linear(out, state["out_proj.weight"], state.get("out_proj.bias")) if out_proj else out


def multi_head_attention(x, state, n_heads):
    return _mha(x, state, int(n_heads))


def multi_head_attention_heads(x, state, n_heads):
    """Each head's causal attention weights (..., nh, T, T) and values (..., nh, T, hs): what dropout on the
    attention weights keeps or cuts, link by link."""
    q, k, v = (split_heads(t, int(n_heads)) for t in project_linear(x, state))
    T = x.shape[-2]
    scores = (q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])).masked_fill(~allowed(T, T), float("-inf"))
    return torch.softmax(scores, dim=-1), v


def multi_head_attention_grad(which, x, upstream, state, n_heads):
    return reference_grad(multi_head_attention, which, x, upstream, state, n_heads)


def _d_out(state):
    return state["W_query.weight"].shape[0]


EXPECTED = {
    "split_heads": split_heads,
    "merge_heads": merge_heads,
    "multi_head_attention": multi_head_attention,
    "multi_head_attention_grad": multi_head_attention_grad,
    "multi_head_attention_heads": multi_head_attention_heads,
}
MISTAKES = {
    "split_heads": {
        m.SPLIT_NO_TRANSPOSE: _split_no_transpose,
        m.INTERLEAVED_HEADS: _split_interleaved,
    },
    "merge_heads": {
        m.MERGE_NO_TRANSPOSE: _merge_no_transpose,
        m.INTERLEAVED_HEADS: _merge_interleaved,
    },
    "multi_head_attention": in_context(
        {
            m.SPLIT_NO_TRANSPOSE: lambda x, s, nh: _mha(x, s, nh, split=_split_no_transpose),
            m.MERGE_NO_TRANSPOSE: lambda x, s, nh: _mha(x, s, nh, merge=_merge_no_transpose),
            m.SPLIT_MERGE_NO_TRANSPOSE: lambda x, s, nh: _mha(
                x, s, nh, split=_split_no_transpose, merge=_merge_no_transpose
            ),
            m.INTERLEAVED_HEADS: lambda x, s, nh: _mha(x, s, nh, split=_split_interleaved, merge=_merge_interleaved),
            m.MISSING_OUT_PROJ: lambda x, s, nh: _mha(x, s, nh, out_proj=False),
            m.SCALE_D_OUT: lambda x, s, nh: _mha(x, s, nh, scale=math.sqrt(_d_out(s))),
            # one head: the right answer; head_size == n_heads: the numbers of no scale (then none is named)
            m.SCALE_D_OUT_OVER_HEADS: lambda x, s, nh: _mha(x, s, nh, scale=math.sqrt(_d_out(s)) / nh),
            # head_size == n_heads ** 3: the numbers of a scale by head_size (then neither is named)
            m.SCALE_D_OUT_TIMES_HEADS: lambda x, s, nh: _mha(x, s, nh, scale=math.sqrt(_d_out(s)) * nh),
            # where d_in == d_out the two give the same numbers, and neither is named
            m.SCALE_D_IN_HEADS: lambda x, s, nh: _mha(x, s, nh, scale=math.sqrt(s["W_query.weight"].shape[1])),
            # where d_in // n_heads is 1, n_heads or another scale's size, the numbers are that mistake's (none is named)
            m.SCALE_HS_FROM_D_IN: lambda x, s, nh: _mha(x, s, nh, scale=math.sqrt(s["W_query.weight"].shape[1] // nh)),
            m.MISSING_SCALE: lambda x, s, nh: _mha(x, s, nh, scale=1.0),
            # where head_size == sqrt(d_in) or sqrt(n_heads) the numbers are those of the mistakes above or below
            m.SCALE_HS_NO_SQRT: lambda x, s, nh: _mha(x, s, nh, scale=_d_out(s) / nh),
            # one head: the same numbers as no scale; n_heads == d_in or d_out: as those (then none is named)
            m.SCALE_N_HEADS: lambda x, s, nh: _mha(x, s, nh, scale=math.sqrt(nh)),
            # where T equals another size the numbers are that size's mistake's (then none is named)
            m.SCALE_STEPS: lambda x, s, nh: _mha(x, s, nh, scale=math.sqrt(x.shape[-2])),
            m.NO_MASK: lambda x, s, nh: _mha(x, s, nh, allowed=None),
            m.MASK_AFTER_SOFTMAX: lambda x, s, nh: _mha(x, s, nh, mask_after=True),
            m.ZERO_NOT_INF: lambda x, s, nh: _mha(x, s, nh, fill=0.0),
            m.INVERTED_MASK: lambda x, s, nh: _mha(x, s, nh, allowed=~allowed(x.shape[-2], x.shape[-2])),
            m.SOFTMAX_DIM: lambda x, s, nh: _mha(x, s, nh, dim=-2),
            # (B, nh, T, T) scores: dim=1 is the heads (NaN where every head hides a key, as the learner's)
            m.SOFTMAX_OVER_HEADS: lambda x, s, nh: _mha(x, s, nh, dim=1),
            m.SCALE_AFTER_SOFTMAX: lambda x, s, nh: _mha(x, s, nh, scale_after=True),
            m.SCALE_TIMES: lambda x, s, nh: _mha(x, s, nh, times=True),
            m.FLOOR_DIVIDED: lambda x, s, nh: _mha(x, s, nh, floor=True),
            m.QK_SWAPPED: lambda x, s, nh: _mha(x, s, nh, swapped=True),
            m.BIAS_NOT_ADDED: lambda x, s, nh: _mha(x, without_biases(s), nh),
        },
        lambda x, s, nh, diagonal: _mha(x, s, nh, allowed=allowed(x.shape[-2], x.shape[-2], diagonal)),
    ),
}
