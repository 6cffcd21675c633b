"""Stage 9: key padding masks, masked attention (padding, causal, T_q != T_k) and multi-head cross-attention.

The judge also compares with ``F.scaled_dot_product_attention`` (given the equivalent boolean ``attn_mask``) and
``nn.MultiheadAttention`` themselves (:mod:`autograder.graders.padding`); the references here are the same
computation written out, so that each known mistake is a small change of it. ``cross_attention(x, context,
state, n_heads, mask)`` takes the weights in the learner's ``state_dict`` layout.
"""

import math

import torch
import torch.nn.functional as F

from autograder.graders import attention as a
from autograder.graders import padding as p


def key_padding_mask(lengths, T):
    return torch.arange(int(T))[None, :] < lengths.to(torch.int64)[:, None]


def attend(
    q,
    k,
    v,
    mask=None,
    causal=False,
    *,
    scale=None,
    invert=False,
    on_queries=False,
    no_key="zeros",
    fill=float("-inf"),
    after=False,
    bottom_right=False,
    use_mask=True,
    diagonal=0,
    upper=False,
    softmax_dim=-1,
    over_heads=False,
    floor=False,
    swapped=False,
):
    """softmax(q k^T / sqrt(hs)) v with the keys of ``mask`` (True = real token) and, when ``causal``, the future
    hidden. The keyword arguments exist to write the known mistakes as small changes of the same code."""
    T_q, T_k = q.shape[-2], k.shape[-2]
    if swapped and T_q != T_k:  # k q^T is (T_k, T_q): the masks do not fit it (the learner's code raises)
        raise ValueError("keys and queries swapped: the scores are (T_k, T_q)")
    scores = k @ q.transpose(-2, -1) if swapped else q @ k.transpose(-2, -1)
    divisor = math.sqrt(q.shape[-1]) if scale is None else scale
    scores = torch.div(scores, divisor, rounding_mode="floor") if floor else scores / divisor
    in_time = torch.ones(T_q, T_k, dtype=torch.bool)  # the causal part
    if causal:
        offset = (T_k - T_q if bottom_right else 0) + diagonal
        in_time = in_time.triu(offset) if upper else in_time.tril(offset)
    real = torch.ones(T_q, T_k, dtype=torch.bool)  # the padding part
    if mask is not None and use_mask:
        m = ~mask if invert else mask
        extra = [1] * (q.dim() - 3)
        real = m.reshape(q.shape[0], *extra, T_q, 1) if on_queries else m.reshape(q.shape[0], *extra, 1, T_k)
        if over_heads:  # the batch lined up with the heads: only where there are as many
            if q.dim() != 4 or m.shape[0] != q.shape[1]:
                raise ValueError("the mask does not broadcast over the heads here")
            real = m.reshape(1, m.shape[0], 1, T_k)
        real = real.expand(*real.shape[:-2], T_q, T_k)
    if fill == 0.0:  # padded keys' scores replaced by 0: they stay in the softmax
        scores = scores.masked_fill(~real, 0.0)
        visible = in_time & torch.ones_like(real)
    elif after:  # padded keys zeroed after the softmax
        visible = in_time & torch.ones_like(real)
    else:
        visible = in_time & real
    scores = scores.masked_fill(~visible, float("-inf"))
    has_key = visible.any(-1, keepdim=True)
    if no_key == "zeros":
        weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=softmax_dim).masked_fill(~has_key, 0.0)
    elif no_key == "uniform":
        weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=softmax_dim)
    else:  # "nan": a row of -inf straight into the softmax
        weights = torch.softmax(scores, dim=softmax_dim)
    if after:
        weights = weights.masked_fill(~real, 0.0)
    return weights @ v


def masked_attention(q, k, v, mask=None, causal=False):
    return attend(q, k, v, mask, bool(causal))


def split(t, n_heads):
    B, T, C = t.shape
    return t.reshape(B, T, n_heads, C // n_heads).transpose(1, 2)


def cross_attention(
    x,
    context,
    state,
    n_heads,
    mask=None,
    *,
    keys_from=None,
    queries_from=None,
    out_proj=True,
    scale=None,
    merge_transpose=True,
    **attend_kw,
):
    n_heads = int(n_heads)
    q_in = x if queries_from is None else queries_from(x, context)
    kv_in = context if keys_from is None else keys_from(x, context)
    q = split(F.linear(q_in, state["W_query.weight"], state.get("W_query.bias")), n_heads)
    k = split(F.linear(kv_in, state["W_key.weight"], state.get("W_key.bias")), n_heads)
    v = split(F.linear(kv_in, state["W_value.weight"], state.get("W_value.bias")), n_heads)
    heads = attend(q, k, v, mask, False, scale=scale, **attend_kw)  # (B, nh, T_q, hs)
    B, nh, T_q, hs = heads.shape
    out = (heads.transpose(1, 2) if merge_transpose else heads).reshape(B, T_q, nh * hs)
    return F.linear(out, state["out_proj.weight"], state.get("out_proj.bias")) if out_proj else out


def cross_attention_heads(x, context, state, n_heads, mask=None):
    """Each head's attention weights (B, nh, T_q, T_k) and values (B, nh, T_k, hs): what dropout on the attention
    weights keeps or cuts, link by link (the weights are the attention of the identity's rows)."""
    n_heads = int(n_heads)
    q = split(F.linear(x, state["W_query.weight"], state.get("W_query.bias")), n_heads)
    k = split(F.linear(context, state["W_key.weight"], state.get("W_key.bias")), n_heads)
    v = split(F.linear(context, state["W_value.weight"], state.get("W_value.bias")), n_heads)
    return attend(q, k, torch.eye(k.shape[-2], dtype=q.dtype), mask, False), v


def _cross_for_grad(x, state, context, n_heads, mask):
    return cross_attention(x, context, state, n_heads, mask)


def cross_attention_grad(which, x, context, upstream, state, n_heads, mask=None):
    from .self_attention import reference_grad

    return reference_grad(_cross_for_grad, which, x, upstream, state, context, n_heads, mask)


def _attention_variants() -> dict:
    def run(**kw):
        return lambda q, k, v, mask=None, causal=False: attend(q, k, v, mask, bool(causal), **kw)

    return {
        p.PAD_INVERTED: run(invert=True),
        p.NAN_ROWS: run(no_key="nan"),
        p.NO_KEY_UNIFORM: run(no_key="uniform"),
        p.PAD_IGNORED: run(use_mask=False),
        p.PAD_ON_QUERIES: run(on_queries=True),
        p.PAD_AFTER_SOFTMAX: run(after=True),
        p.PAD_ZERO_NOT_INF: run(fill=0.0),
        p.CAUSAL_BOTTOM_RIGHT: run(bottom_right=True),
        p.CAUSAL_IGNORED: lambda q, k, v, mask=None, causal=False: attend(q, k, v, mask, False),
        a.OFF_BY_ONE_HIDDEN: run(diagonal=-1),
        a.OFF_BY_ONE_VISIBLE: run(diagonal=1),
        a.UPPER_TRIANGLE: run(upper=True),
        a.SOFTMAX_DIM: run(softmax_dim=-2),
        a.MISSING_SCALE: run(scale=1.0),
        a.SCALE_HS_V: lambda q, k, v, mask=None, causal=False: attend(
            q, k, v, mask, bool(causal), scale=math.sqrt(v.shape[-1])
        ),
        a.SCALE_T: lambda q, k, v, mask=None, causal=False: attend(
            q, k, v, mask, bool(causal), scale=math.sqrt(k.shape[-2])
        ),
        a.SCALE_NO_SQRT: lambda q, k, v, mask=None, causal=False: attend(
            q, k, v, mask, bool(causal), scale=q.shape[-1]
        ),
        a.SCALE_TIMES: lambda q, k, v, mask=None, causal=False: attend(
            q, k, v, mask, bool(causal), scale=1.0 / math.sqrt(q.shape[-1])
        ),
        a.FLOOR_DIVIDED: run(floor=True),
        # named where T_q == T_k (elsewhere the learner's masking fails on the shapes, and the variant is skipped)
        a.QK_SWAPPED: run(swapped=True),
    }


def _cross_variants() -> dict:
    def run(**kw):
        return lambda x, c, s, nh, mask=None: cross_attention(x, c, s, nh, mask, **kw)

    def d_out(s):
        return s["W_query.weight"].shape[0]

    return {
        p.KEYS_FROM_X: run(keys_from=lambda x, c: x),
        p.QUERIES_FROM_CONTEXT: run(keys_from=lambda x, c: x, queries_from=lambda x, c: c),
        p.PAD_INVERTED: run(invert=True),
        p.NAN_ROWS: run(no_key="nan"),
        p.NO_KEY_UNIFORM: run(no_key="uniform"),
        p.PAD_IGNORED: run(use_mask=False),
        p.PAD_ON_QUERIES: run(on_queries=True),
        p.PAD_AFTER_SOFTMAX: run(after=True),
        a.MISSING_OUT_PROJ: run(out_proj=False),
        a.MERGE_NO_TRANSPOSE: run(merge_transpose=False),
        p.PAD_OVER_HEADS: run(over_heads=True),
        a.SOFTMAX_DIM: run(softmax_dim=-2),
        a.SCALE_D_OUT: lambda x, c, s, nh, mask=None: cross_attention(x, c, s, nh, mask, scale=math.sqrt(d_out(s))),
        # where d_kv equals d_out or the head size, the numbers are those of that scale (then none is named)
        p.SCALE_D_KV: lambda x, c, s, nh, mask=None: cross_attention(x, c, s, nh, mask, scale=math.sqrt(c.shape[-1])),
        a.MISSING_SCALE: run(scale=1.0),
        # the other scales a learner reaches for: each named where it alone explains the answer; where two give the
        # same numbers on an input (T_k == d_out, d_q == d_out), neither is
        a.SCALE_T: lambda x, c, s, nh, mask=None: cross_attention(x, c, s, nh, mask, scale=math.sqrt(c.shape[-2])),
        a.SCALE_D_IN_HEADS: lambda x, c, s, nh, mask=None: cross_attention(
            x, c, s, nh, mask, scale=math.sqrt(x.shape[-1])
        ),
        a.SCALE_HS_NO_SQRT: lambda x, c, s, nh, mask=None: cross_attention(
            x, c, s, nh, mask, scale=d_out(s) // int(nh)
        ),
        # one head: the right answer; head_size == n_heads: the numbers of no scale (then none is named)
        a.SCALE_D_OUT_OVER_HEADS: lambda x, c, s, nh, mask=None: cross_attention(
            x, c, s, nh, mask, scale=math.sqrt(d_out(s)) / int(nh)
        ),
        a.SCALE_TIMES: lambda x, c, s, nh, mask=None: cross_attention(
            x, c, s, nh, mask, scale=1.0 / math.sqrt(d_out(s) // int(nh))
        ),
        a.FLOOR_DIVIDED: run(floor=True),
        a.QK_SWAPPED: run(swapped=True),  # where T_q == T_k (test_keys_from_context)
    }


EXPECTED = {
    "key_padding_mask": key_padding_mask,
    "masked_attention": masked_attention,
    "cross_attention": cross_attention,
    "cross_attention_grad": cross_attention_grad,
    "cross_attention_heads": cross_attention_heads,
}
MISTAKES = {
    "key_padding_mask": {
        p.PAD_INVERTED: lambda lengths, T: ~key_padding_mask(lengths, T),
        p.LENGTH_OFF_BY_ONE: lambda lengths, T: torch.arange(int(T))[None, :] <= lengths.to(torch.int64)[:, None],
    },
    "masked_attention": _attention_variants(),
    "cross_attention": _cross_variants(),
}
