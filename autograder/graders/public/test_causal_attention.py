"""Stage 7, public checks: causal attention, compared with PyTorch's scaled_dot_product_attention.

The value to match is ``F.scaled_dot_product_attention(q, k, v, is_causal=True)`` computed here, in the judge, on
the CPU in float64. Recorded calls are traced and the judge replays their graph (autograder/sandbox/evidence.py): reaching
that function (or any fused attention kernel) from the learner's code earns nothing. Fixed inputs only (stored for student releases).
"""

import torch
import torch.nn.functional as F

from autograder import oracle
from autograder.checks import check, expect_close, expect_kept, expect_precise, expect_shape
from autograder.graders import attention as a
from autograder.graders.attention import (
    expect_causal,
    by_hand_module,
    expect_close_by_hand,
    expect_dropout_in_training,
    explained,
    grads_of,
    linear_weights,
    new_module,
    perturb_from,
    qkv,
    require_by_hand,
    sdpa,
    weight_names,
)
from autograder.graders.inputs import fixed

STAGE = "causal_attention"
F64 = torch.float64
NAMES = ("W_query", "W_key", "W_value")
HINT = (
    "Create self.W_query, self.W_key, self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias), "
    "self.dropout = nn.Dropout(dropout) and the mask buffer"
)

# (q, k, v): hs != hs_v; one step; extra leading dims (..., T, hs); T_q < T_k and T_q > T_k (the mask is (T_q,
# T_k), aligned top-left as SDPA's is_causal: a mask built from T_q or from T_k alone fails here)
CASES = [
    (fixed(2, 5, 4, seed=71, low=-2, high=2), fixed(2, 5, 4, seed=72, low=-2, high=2), fixed(2, 5, 3, seed=73)),
    (fixed(1, 1, 2, seed=74, low=-2, high=2), fixed(1, 1, 2, seed=75, low=-2, high=2), fixed(1, 1, 5, seed=76)),
    (
        fixed(2, 3, 6, 4, seed=77, low=-2, high=2),
        fixed(2, 3, 6, 4, seed=78, low=-2, high=2),
        fixed(2, 3, 6, 2, seed=79),
    ),
    (fixed(2, 3, 4, seed=96, low=-2, high=2), fixed(2, 5, 4, seed=97, low=-2, high=2), fixed(2, 5, 3, seed=98)),
    (fixed(2, 5, 4, seed=190, low=-2, high=2), fixed(2, 3, 4, seed=191, low=-2, high=2), fixed(2, 3, 3, seed=192)),
]
X8 = fixed(2, 8, 4, seed=80, low=-2, high=2)  # (B, T = context_length, d_in)


def shape_of(*ts):
    return ", ".join(str(tuple(t.shape)) for t in ts)


def module(student, *, d_in=4, hs=3, L=8, dropout=0.0, bias=False, wseed=81, dtype=F64, bias_values=False):
    """CausalSelfAttention(d_in, hs, L, dropout, bias) in ``dtype`` holding fixed weights (zero biases unless
    ``bias_values``, see :func:`linear_weights`); returns (handle, weights)."""
    w = linear_weights(qkv(d_in, hs), bias=bias, seed=wseed, bias_values=bias_values)
    handle = new_module(
        student,
        "CausalSelfAttention",
        d_in,
        hs,
        L,
        dropout=dropout,
        qkv_bias=bias,
        weights=w,
        what=f"CausalSelfAttention({d_in}, {hs}, {L}, qkv_bias={bias})",
        hint=HINT,
        dtype=dtype,
    )
    return handle, handle.held


def module_values(student, handle, w, x, what, record=True, context_length=8):
    """``handle`` (built by :func:`module`, mask buffer ``context_length``) on ``x``: values as the reference's."""
    with explained(student, what):
        reply = handle(
            x, cast=F64, full=True, record=record and (lambda x: oracle.expected("causal_self_attention", x, w))
        )
    expect_close_by_hand(
        reply,
        oracle.expected("causal_self_attention", x, w),
        what=what,
        mistakes=oracle.mistakes("causal_self_attention", x, w, context_length=context_length),
    )


# ───────────────────────────── causal_attention(q, k, v) ─────────────────────────────


@check(
    "causal_attention: equals scaled_dot_product_attention(is_causal=True) (hs != hs_v, T = 1, leading dims, "
    "T_q != T_k)",
    weight=3,
)
def test_sdpa_parity(student):
    for i, (q, k, v) in enumerate(CASES):
        what = f"causal_attention(q, k, v of shapes {shape_of(q, k, v)})"
        with explained(student, what):  # one recorded call per check: tracing and replaying it costs tens of ms
            reply = student.call("causal_attention", q, k, v, cast=F64, record=i == 0 and sdpa, full=True)
        expect_close_by_hand(
            reply,
            sdpa(q, k, v),
            what=what + ", compared with F.scaled_dot_product_attention",
            mistakes=oracle.mistakes("causal_attention", q, k, v),
        )


@check("causal_attention written by hand: no scaled_dot_product_attention (or another fused kernel)", weight=2)
def test_by_hand(student):
    q, k, v = CASES[0]
    with explained(student, "causal_attention(q, k, v)"):
        reply = student.call("causal_attention", q, k, v, cast=torch.float32, record=sdpa, full=True)
    require_by_hand(reply, "causal_attention", sdpa(q, k, v), oracle.mistakes("causal_attention", q, k, v))


@check("CausalSelfAttention written by hand: no scaled_dot_product_attention (or another fused kernel)")
def test_module_by_hand(student):
    w = linear_weights(qkv(4, 3), bias=False, seed=178)
    what = "CausalSelfAttention(4, 3, 8)"
    handle, reference = by_hand_module(student, "CausalSelfAttention", (4, 3, 8), w, "causal_self_attention", what=what)
    with explained(student, f"{what}(x)"):
        reply = handle(X8, cast=torch.float32, record=reference, full=True)
    require_by_hand(reply, "CausalSelfAttention.forward", reference(X8))


@check("causal_attention: changing a future step never changes an earlier output", weight=2)
def test_causality(student):
    q, k, v = (
        fixed(2, 6, 4, seed=82, low=-2, high=2),
        fixed(2, 6, 4, seed=83, low=-2, high=2),
        fixed(2, 6, 3, seed=84),
    )
    what = "causal_attention(q, k, v (2, 6, .))"
    with explained(student, what):
        base = expect_shape(student.call("causal_attention", q, k, v, cast=F64), (2, 6, 3), what)
        for t in (4, 1):
            changed = [perturb_from(z, t, seed=85 + t + i) for i, z in enumerate((q, k, v))]
            after = student.call("causal_attention", *changed, cast=F64)
            expect_causal(
                base,
                after,
                t,
                what=what,
                changed_what="q, k and v",
                expected=sdpa(q, k, v),
                mistakes=oracle.mistakes("causal_attention", q, k, v),
            )


@check("causal_attention: inputs unchanged, dtype and device kept")
def test_function_meta(student, device):
    q, k, v = CASES[0]
    for dtype in (torch.float32,) if device == "mps" else (torch.float32, F64):
        what = f"causal_attention(q, k, v {str(dtype)[6:]} on {device})"
        with explained(student, what):
            reply = student.call("causal_attention", q, k, v, to=device, cast=dtype, full=True, return_inputs=True)
        expect_kept(reply, what, sdpa(q, k, v), shape=(2, 5, 3), dtype=dtype, device=device)


# ───────────────────────────── CausalSelfAttention ─────────────────────────────


@check(
    "CausalSelfAttention: nn.Linear(d_in, head_size) projections, an nn.Dropout, the mask a registered bool buffer",
    construction=True,
)
def test_module_structure(student):
    for bias in (False, True):
        handle = student.new("CausalSelfAttention", 4, 3, 8, qkv_bias=bias, seed=123)
        a.expect_structure(
            handle.info,
            linears={n: (4, 3, bias) for n in NAMES},
            dropout=True,
            mask=8,
            what=f"CausalSelfAttention(4, 3, context_length=8, qkv_bias={bias})",
            state=handle.state() if "mask" in handle.info.get("buffers", {}) else None,
        )


@check("CausalSelfAttention: values with the same weights, T == context_length (with and without bias)", weight=2)
def test_module_values(student):
    for bias in (False, True):
        handle, w = module(student, bias=bias, wseed=86 + bias, bias_values=True)  # the biases' one check
        module_values(
            student, handle, w, X8, f"CausalSelfAttention(4, 3, 8, qkv_bias={bias})(x (2, 8, 4))", record=not bias
        )


@check("CausalSelfAttention: T shorter than context_length works (T = 5, T = 1)")
def test_module_short(student):
    handle, w = module(student, wseed=88)
    for T in (5, 1):
        x = X8[:, :T].clone()
        module_values(
            student, handle, w, x, f"CausalSelfAttention(4, 3, context_length=8)(x (2, {T}, 4))", record=T == 5
        )


@check("CausalSelfAttention: dropout=0.0 is deterministic in training mode and equals the reference")
def test_module_no_dropout(student):
    handle, w = module(student, wseed=89)
    handle.train(True)
    what = "CausalSelfAttention(4, 3, 8, dropout=0.0) in training mode"
    expected = oracle.expected("causal_self_attention", X8, w)
    with explained(student, what):
        outs = [handle(X8, cast=F64, seed=s) for s in (1, 2)]
    for out in outs:
        expect_close(out, expected, what=what, mistakes=oracle.mistakes("causal_self_attention", X8, w))


@check(
    "CausalSelfAttention: dropout acts on the attention weights in training mode, and not at all in eval mode", weight=2
)
def test_module_dropout(student):
    p, x = 0.5, fixed(2, 6, 4, seed=90, low=-2, high=2)
    handle, w = module(student, L=6, dropout=p, wseed=91)
    what = f"CausalSelfAttention(4, 3, 6, dropout={p})"
    expected = oracle.expected("causal_self_attention", x, w)
    handle.train(False)
    with explained(student, what):
        got = handle(x, cast=F64)
    expect_close(
        got,
        expected,
        what=what + " after .eval() (dropout must do nothing)",
        mistakes=oracle.mistakes("causal_self_attention", x, w),
    )
    weights = oracle.expected("causal_self_attention_weights", x, w)  # (B, T, T)
    values = F.linear(x, w["W_value.weight"])  # (B, T, hs)
    expect_dropout_in_training(student, handle, (x,), expected, (weights.unsqueeze(1), values.unsqueeze(1)), p, what)


@check("CausalSelfAttention: changing a future step of x never changes an earlier output")
def test_module_causality(student):
    handle, w = module(student, wseed=92)
    what = "CausalSelfAttention(4, 3, 8)(x (2, 8, 4))"
    with explained(student, what):
        base = handle(X8, cast=F64)
        after = handle(perturb_from(X8, 5, seed=93), cast=F64)
    expect_causal(
        base,
        after,
        5,
        what=what,
        changed_what="x",
        expected=oracle.expected("causal_self_attention", X8, w),
        mistakes=oracle.mistakes("causal_self_attention", X8, w),
    )


@check("CausalSelfAttention: gradients reach W_query, W_key and W_value and equal the reference")
def test_module_gradients(student):
    handle, w = module(student, bias=True, wseed=94)
    up = fixed(2, 8, 3, seed=95)
    what = "CausalSelfAttention(4, 3, 8, qkv_bias=True): backward of sum(out * u)"
    with explained(student, what):
        grads = grads_of(handle(X8, cast=F64, upstream=up, full=True), weight_names(w), what, up)
    for name in weight_names(w):
        expect_close(
            grads[name],
            oracle.expected("causal_self_attention_grad", name, X8, up, w),
            what=f"{what}: gradient of {name}",
        )


@check("CausalSelfAttention: input unchanged, dtype and device kept (the mask moves with .to)")
def test_module_meta(student, device):
    handle, w = module(student, wseed=100)
    expected = oracle.expected("causal_self_attention", X8[:, :6], w)
    for dtype in (torch.float32,) if device == "mps" else (torch.float32, F64):
        handle.to(device, dtype)
        what = f"CausalSelfAttention(4, 3, 8)(x {str(dtype)[6:]} on {device})"
        with explained(student, what):
            reply = handle(X8[:, :6], to=device, cast=dtype, full=True, return_inputs=True)
        expect_kept(reply, what, expected, shape=(2, 6, 3), dtype=dtype, device=device)


@check("keeps the input's precision (float64 in, float64 accuracy out)")
def test_precision(student):
    q, k, v = CASES[0]
    what = "causal_attention(q, k, v float64)"
    with explained(student, what):
        got = student.call("causal_attention", q, k, v, cast=F64)
    expect_precise(got, sdpa(q, k, v), what=what, mistakes=oracle.mistakes("causal_attention", q, k, v))
    handle, w = module(student, bias=True, wseed=101)
    what = "CausalSelfAttention(4, 3, 8, qkv_bias=True) in float64 (x float64)"
    with explained(student, what):
        got = handle(X8, cast=F64)
    expect_precise(
        got,
        oracle.expected("causal_self_attention", X8, w),
        what=what,
        mistakes=oracle.mistakes("causal_self_attention", X8, w),
    )
