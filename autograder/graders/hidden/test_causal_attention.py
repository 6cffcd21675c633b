"""Stage 7, hidden checks: random shapes and steps (seeded per result), non-contiguous inputs, every device."""

import torch

from autograder import oracle
from autograder.checks import HALVES, check, expect_half, expect_shape
from autograder.graders.attention import (
    expect_causal,
    expect_close_by_hand,
    explained,
    new_module,
    perturb_from,
    qkv,
    random_linear_weights,
    sdpa,
)
from autograder.graders.inputs import fixed, randn, rounded, rand_int, rand_int_except, square_roots

STAGE = "causal_attention"
F64 = torch.float64


def _qkv(rng, lead, T, hs, hs_v):
    return randn(rng, *lead, T, hs) * 1.5, randn(rng, *lead, T, hs) * 1.5, randn(rng, *lead, T, hs_v)


@check("causal_attention: random q, k, v of varied shapes equal scaled_dot_product_attention, every device", weight=2)
def test_random_sdpa(student, rng, device):
    leads = [(1,), (3,), (2, 2), ()]
    for i, lead in enumerate(leads):
        # a mask mistake cannot show with one step: only the last case may draw T = 1. The first case is recorded:
        # T >= 4 there, because an answer right by coincidence on a recorded call (a wrong scale at T = 2, for 1
        # student in 40) is replayed against the reference on other inputs, and fails as unverifiable
        T = rand_int(rng, 4 if i == 0 else 1 if i == len(leads) - 1 else 2, 9)
        # hs >= 2 (a scale of sqrt(1) is no scale). In the first case the wrong scales are told apart for every
        # student: 1, sqrt(hs), hs (no square root), sqrt(hs_v) and sqrt(T) all differ (hs_v >= 2, T, hs and
        # hs_v differ, neither T nor hs_v is hs squared)
        if i == 0:
            hs = rand_int_except(rng, 2, 8, {T} | square_roots(T))
            hs_v = rand_int_except(rng, 2, 8, {T, hs, hs * hs})
        else:
            hs, hs_v = rand_int(rng, 2, 8), rand_int(rng, 1, 8)
        q, k, v = _qkv(rng, lead, T, hs, hs_v)
        dtype = torch.float64 if device == "cpu" else torch.float32
        what = f"causal_attention(q, k {tuple(q.shape)}, v {tuple(v.shape)}, {str(dtype)[6:]} on {device})"
        with explained(student, what):
            reply = student.call("causal_attention", q, k, v, to=device, cast=dtype, record=i == 0 and sdpa, full=True)
        expect_close_by_hand(reply, sdpa(q, k, v), what=what, mistakes=oracle.mistakes("causal_attention", q, k, v))


@check("causal_attention: non-contiguous q, k and v")
def test_noncontig(student, rng):
    q, k, v = _qkv(rng, (2,), 6, 4, 3)
    what = "causal_attention(q, k, v non-contiguous)"
    with explained(student, what):
        reply = student.call("causal_attention", q, k, v, cast=F64, noncontig=True, record=sdpa, full=True)
    expect_close_by_hand(reply, sdpa(q, k, v), what=what, mistakes=oracle.mistakes("causal_attention", q, k, v))


@check("causal_attention: a change at a random step never reaches an earlier output")
def test_random_causality(student, rng):
    # T is never the head size 4 nor the value size 5: a scale by sqrt(T) would be right by coincidence there, and
    # this check (which counts only with correct values) would pass for some students' seeds and not others'. Nor
    # 3: a mask tril(diagonal=2) hides nothing there, and its leak would be named "no mask" for those students only
    T = rand_int_except(rng, 3, 10, {3, 4, 5})
    q, k, v = _qkv(rng, (2,), T, 4, 5)
    t = rand_int(rng, 1, T - 1)
    what = f"causal_attention(q, k, v (2, {T}, .))"
    with explained(student, what):
        base = expect_shape(student.call("causal_attention", q, k, v, cast=F64), (2, T, 5), what)
        changed = [perturb_from(z, t, seed=rand_int(rng, 0, 10**6)) for z in (q, k, v)]
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


@check("CausalSelfAttention: random weights, with and without qkv_bias, T from 1 to context_length", weight=2)
def test_random_module(student, rng):
    L = 9
    # The check stops at its first failing case: there the sizes tell the known mistakes apart for every student.
    # T = 1 hides every scale and every slice of the mask buffer; a wrong scale fails first at T == L, a wrong
    # slice (right at T == L) at the shorter T. That T is 6 or 7, where a slice from a wrong corner has numbers of
    # its own: self.mask[-T:, :T] lets query t see keys up to t + (L - T), no mask at all for T <= 5 (L - T >=
    # T - 1); self.mask[:T, -T:] keys up to t - (L - T), none for any query (NaN everywhere) for T <= 4; and both
    # are one step off (tril(diagonal=1) or (-1)) at T = L - 1. The module meets T = 5 of 8 in a public check
    # and T = L - 1 in test_module_devices; causal_attention itself every T from 1 to 9 in test_random_sdpa.
    for T, bias in ((1, True), (L, True), (rand_int(rng, 6, 7), False)):
        if T == L:
            # the right scale sqrt(hs) and the wrong ones, 1, hs (no square root), sqrt(d_in) and sqrt(T), all
            # differ: hs * hs != L, d_in is neither hs, hs * hs nor L (a scale by sqrt(context_length) is then
            # named as the one by sqrt(T), the same words, for every student)
            hs = rand_int_except(rng, 2, 5, square_roots(L))
            d_in = rand_int_except(rng, 2, 7, {hs, hs * hs, L})
        else:
            d_in, hs = rand_int(rng, 2, 6), rand_int(rng, 2, 5)
            d_in += d_in == hs  # sqrt(d_in) and sqrt(hs) never coincide, nor sqrt(1) with no scale
        w = random_linear_weights(rng, qkv(d_in, hs), bias=bias)
        handle = new_module(
            student,
            "CausalSelfAttention",
            d_in,
            hs,
            L,
            qkv_bias=bias,
            weights=w,
            what=f"CausalSelfAttention({d_in}, {hs}, {L}, qkv_bias={bias})",
            dtype=F64,
        )
        w = handle.held
        x = randn(rng, 3, T, d_in)
        what = f"CausalSelfAttention({d_in}, {hs}, {L}, qkv_bias={bias})(x (3, {T}, {d_in}))"
        with explained(student, what):
            reply = handle(
                x,
                cast=F64,
                record=T == 1 and (lambda x, w=w: oracle.expected("causal_self_attention", x, w)),
                full=True,
            )
        expect_close_by_hand(
            reply,
            oracle.expected("causal_self_attention", x, w),
            what=what,
            mistakes=oracle.mistakes("causal_self_attention", x, w, context_length=L),
        )


@check("CausalSelfAttention: non-contiguous input, every device")
def test_module_devices(student, rng, device):
    w = random_linear_weights(rng, qkv(4, 3), bias=False)
    handle = new_module(student, "CausalSelfAttention", 4, 3, 8, weights=w, what="CausalSelfAttention(4, 3, 8)")
    w = handle.held
    handle.to(device, torch.float32)
    x = randn(rng, 2, 7, 4)
    what = f"CausalSelfAttention(4, 3, 8)(x non-contiguous, float32 on {device})"
    with explained(student, what):
        reply = handle(
            x,
            to=device,
            cast=torch.float32,
            noncontig=True,
            full=True,
            record=lambda x: oracle.expected("causal_self_attention", x, w),
        )
    expect_close_by_hand(
        reply,
        oracle.expected("causal_self_attention", x, w),
        what=what,
        mistakes=oracle.mistakes("causal_self_attention", x, w, context_length=8),
    )


# The last key's score with every earlier query is about 99: a future score whose exp overflows float16 and
# bfloat16 (it stays in range only after -inf has taken it out, or after a shift by the visible maximum), where
# every visible score is 0. Fixed, so that an exp taken before masking fails for every seed, not for some.
_FAR_FUTURE = (
    torch.ones(1, 4, 2, dtype=F64),
    torch.tensor([[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [70.0, 70.0]]], dtype=F64),
    fixed(1, 4, 3, seed=137),
)


@check(
    "float16 and bfloat16 (CPU): values in half precision, the dtype kept (a large negative fill overflows there: -inf)"
)
def test_half(student, rng):
    q, k, v = _qkv(rng, (2,), 6, 4, 3)
    w = random_linear_weights(rng, qkv(4, 3), bias=True)
    x = randn(rng, 2, 6, 4)
    for dtype in HALVES:
        for (qd, kd, vd), note in (((q, k, v), ""), (_FAR_FUTURE, ", a future score of 99")):
            qh, kh, vh = (rounded(z, dtype) for z in (qd, kd, vd))
            what = f"causal_attention(q, k, v {str(dtype)[6:]}{note})"
            with explained(student, what):
                got = student.call("causal_attention", qh, kh, vh, cast=dtype)
            mistakes = oracle.mistakes("causal_attention", qh, kh, vh)
            expect_half(got, sdpa(qh, kh, vh), dtype, what=what, mistakes=mistakes)
        handle = new_module(
            student,
            "CausalSelfAttention",
            4,
            3,
            8,
            qkv_bias=True,
            weights=w,
            dtype=dtype,
            what="CausalSelfAttention(4, 3, 8, qkv_bias=True)",
        )
        wh, xh = {n: rounded(t, dtype) for n, t in handle.held.items()}, rounded(x, dtype)
        what = f"CausalSelfAttention(4, 3, 8) in {str(dtype)[6:]} (x {str(dtype)[6:]})"
        with explained(student, what):
            got = handle(xh, cast=dtype)
        expect_half(
            got,
            oracle.expected("causal_self_attention", xh, wh),
            dtype,
            what=what,
            mistakes=oracle.mistakes("causal_self_attention", xh, wh, context_length=8),
        )
