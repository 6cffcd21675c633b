"""Stage 7: causal attention, as a function of (q, k, v) and as a module with its own projections.

The judge also compares with ``F.scaled_dot_product_attention(..., is_causal=True)`` itself; the reference here
is the same computation written out, so that each known mistake is a one-line change of it.
"""

import math

import torch

from autograder.graders import attention as m
from autograder.graders.padding import CAUSAL_BOTTOM_RIGHT

from .self_attention import attend, project_linear, reference_grad, without_biases


def allowed(T_q: int, T_k: int, diagonal: int = 0) -> torch.Tensor:
    """True where query t may look at key s: s <= t (+ diagonal), aligned top-left like SDPA's is_causal."""
    return torch.ones(T_q, T_k, dtype=torch.bool).tril(diagonal)


def causal_attention(q, k, v):
    return attend(q, k, v, allowed=allowed(q.shape[-2], k.shape[-2]))


def causal_weights(q, k):
    """The attention weights (..., T, T): row t is how much output t takes from each step."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
    return torch.softmax(scores.masked_fill(~allowed(q.shape[-2], k.shape[-2]), float("-inf")), dim=-1)


def variants() -> dict:
    """Known mistakes as functions of (q, k, v)."""

    def mask(q, k, diagonal=0):
        return allowed(q.shape[-2], k.shape[-2], diagonal)

    return {
        m.NO_MASK: lambda q, k, v: attend(q, k, v),
        m.MASK_AFTER_SOFTMAX: lambda q, k, v: attend(q, k, v, allowed=mask(q, k), mask_after=True),
        m.ZERO_NOT_INF: lambda q, k, v: attend(q, k, v, allowed=mask(q, k), fill=0.0),
        m.INVERTED_MASK: lambda q, k, v: attend(q, k, v, allowed=~mask(q, k)),
        m.UPPER_TRIANGLE: lambda q, k, v: attend(
            q, k, v, allowed=torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).triu()
        ),
        m.OFF_BY_ONE_HIDDEN: lambda q, k, v: attend(q, k, v, allowed=mask(q, k, -1)),
        m.OFF_BY_ONE_VISIBLE: lambda q, k, v: attend(q, k, v, allowed=mask(q, k, 1)),
        # tril(diagonal=T_k - T_q): the same as top-left where T_q == T_k, so named only where they differ
        CAUSAL_BOTTOM_RIGHT: lambda q, k, v: attend(q, k, v, allowed=mask(q, k, k.shape[-2] - q.shape[-2])),
        m.MISSING_SCALE: lambda q, k, v: attend(q, k, v, allowed=mask(q, k), scale=1.0),
        m.SCALE_NO_SQRT: lambda q, k, v: attend(q, k, v, allowed=mask(q, k), scale=float(k.shape[-1])),
        m.SCALE_HS_V: lambda q, k, v: attend(q, k, v, allowed=mask(q, k), scale=math.sqrt(v.shape[-1])),
        m.SCALE_T: lambda q, k, v: attend(q, k, v, allowed=mask(q, k), scale=math.sqrt(q.shape[-2])),
        m.SOFTMAX_DIM: lambda q, k, v: attend(q, k, v, allowed=mask(q, k), dim=-2),
        m.SCALE_AFTER_SOFTMAX: lambda q, k, v: attend(q, k, v, allowed=mask(q, k), scale_after=True),
        m.SCALE_TIMES: lambda q, k, v: attend(q, k, v, allowed=mask(q, k), times=True),
        m.FLOOR_DIVIDED: lambda q, k, v: attend(q, k, v, allowed=mask(q, k), floor=True),
        # k @ q^T is (T_k, T_q): where T_q != T_k the mask does not fit and the variant does not apply
        m.QK_SWAPPED: lambda q, k, v: attend(q, k, v, allowed=mask(q, k), swapped=True),
    }


def causal_self_attention(x, state):
    return causal_attention(*project_linear(x, state))


def causal_self_attention_weights(x, state):
    q, k, _ = project_linear(x, state)
    return causal_weights(q, k)


def causal_self_attention_grad(which, x, upstream, state):
    return reference_grad(causal_self_attention, which, x, upstream, state)


def _scaled_by_d_in(x, state):
    q, k, v = project_linear(x, state)
    return attend(q, k, v, allowed=allowed(q.shape[-2], k.shape[-2]), scale=math.sqrt(x.shape[-1]))


def _through_projections(fn):
    return lambda x, state: fn(*project_linear(x, state))


def in_context(variants: dict, corner) -> dict:
    """A module's mistakes as functions of (..., context_length=None): the grader passes the size of the mask
    buffer where it knows it (a module it built), and then the two slices of the buffer from a wrong corner
    are known mistakes too. ``corner(*args, diagonal)``: the module's output with the mask tril(diagonal).
    Without context_length those two do not apply (they raise, and are left out)."""

    def ignoring(fn):
        return lambda *args, context_length=None: fn(*args)

    def sliced(sign: int):
        def wrong(*args, context_length=None):
            T = args[0].shape[-2]
            if context_length is None or not T < context_length:
                raise ValueError("the corners differ only where T < context_length")
            return corner(*args, sign * (context_length - T))

        return wrong

    return {
        **{name: ignoring(fn) for name, fn in variants.items()},
        m.MASK_TOP_RIGHT: sliced(-1),  # mask[:T, L - T:]: query t sees keys s <= t - (L - T)
        m.MASK_BOTTOM_LEFT: sliced(1),  # mask[L - T:, :T]: query t sees keys s <= t + (L - T)
    }


def _masked(x, state, diagonal):
    q, k, v = project_linear(x, state)
    return attend(q, k, v, allowed=allowed(q.shape[-2], k.shape[-2], diagonal))


EXPECTED = {
    "causal_attention": causal_attention,
    "causal_self_attention": causal_self_attention,
    "causal_self_attention_weights": causal_self_attention_weights,
    "causal_self_attention_grad": causal_self_attention_grad,
}
MISTAKES = {
    "causal_attention": variants(),
    "causal_self_attention": in_context(
        {
            **{
                (m.SCALE_STEPS if name == m.SCALE_T else name): _through_projections(fn)
                for name, fn in variants().items()
            },
            # the module knows d_in too (where d_in == head_size this gives the right answer, and is not named)
            m.SCALE_D_IN_HEADS: _scaled_by_d_in,
            m.BIAS_NOT_ADDED: lambda x, state: causal_self_attention(x, without_biases(state)),
        },
        _masked,
    ),
}
