"""Stage 9, hidden checks: random lengths, shapes and weights (seeded per result), every device.

Every draw keeps what makes a mistake show, whatever the seed: T_q != T_k, at least one sequence with padding and
one with no real token at all, several heads."""

import torch

from autograder import oracle
from autograder.checks import HALVES, check, credited, expect_close, expect_half, expect_shape
from autograder.graders import padding as p
from autograder.graders.attention import (
    biased,
    expect_close_by_hand,
    expect_dropout_in_training,
    explained,
    new_module,
    random_linear_weights,
)
from autograder.graders.inputs import randn, rounded, rand_head_size, rand_int, rand_int_except
from autograder.graders.public.test_padding_and_cross_attention import layers, module

STAGE = "padding_and_cross_attention"
F64 = torch.float64


def _lengths(rng, B, T, partial_max=None):
    """B >= 3 lengths in 0..T: one full, one empty, one in 1..T-1 (at most ``partial_max``), the others anywhere
    (then shuffled). With a causal mask and T_q queries, ``partial_max`` = T_q - 1 puts padded keys where the
    queries can see them whatever the draw: a mistake in how padding is applied then shows for every student."""
    n = [T, 0, rand_int(rng, 1, min(T - 1, partial_max or T))] + [rand_int(rng, 0, T) for _ in range(B - 3)]
    order = torch.randperm(B, generator=rng).tolist()
    return torch.tensor([n[i] for i in order], dtype=torch.int64)


def _mask(n, T):
    return torch.arange(T)[None, :] < n[:, None]


@check("key_padding_mask: random lengths and T")
def test_random_mask(student, rng):
    T = rand_int(rng, 2, 9)
    n = _lengths(rng, rand_int(rng, 3, 6), T)
    want, known = oracle.expected("key_padding_mask", n, T), oracle.mistakes("key_padding_mask", n, T)
    what = f"key_padding_mask(lengths={n.tolist()}, T={T})"
    with explained(student, what):
        got = expect_shape(student.call("key_padding_mask", n, T), tuple(want.shape), what)
    expect_close(
        got.t.to(torch.bool).to(F64),
        want.to(F64),
        what=what + " (1 = a real token)",
        mistakes={k: v.to(F64) for k, v in known.items()},
    )


@check(
    "masked_attention: random q, k, v with T_q != T_k, random lengths (one sequence without a real key), "
    "causal and not",
    weight=3,
)
def test_random_attention(student, rng):
    for causal in (False, True):
        B, hs = rand_int(rng, 3, 4), rand_int(rng, 2, 5)  # hs >= 2: scales differ
        if not causal:
            # the first case (where a wrong scale fails) tells the scales apart for every student: 1, sqrt(hs),
            # hs (no square root), sqrt(hs_v) and sqrt(T_k) all differ (hs_v >= 2, hs, hs_v and T_k differ,
            # neither hs_v nor T_k is hs squared); hs_v = 1 is the causal case's to draw
            hs_v = rand_int_except(rng, 2, 5, {hs, hs * hs})
            T_k = rand_int_except(rng, 3, 8, {hs, hs * hs, hs_v})
            # never square (an alignment mistake must show); sqrt(T_q), a scale no known mistake names, is none of
            # the scales above (it would be right, or be named for a mistake that was not made)
            T_q = rand_int_except(rng, 2, 9, {T_k, hs, hs_v, hs * hs})
        else:
            hs_v = rand_int(rng, 1, 4)
            # at least two queries fewer than keys for every seed: a mask built (T_q, T_q) then sliced fails there,
            # and only there, and a mask aligned bottom-right (query t sees keys up to t + T_k - T_q) is not the
            # one that shows one future key (T_k - T_q == 1); T_q != hs (a scale by sqrt(T_q) would be right)
            T_k = rand_int_except(rng, 4, 8, {4} if hs == 2 else set())  # T_q = 2 is then hs
            T_q = rand_int_except(rng, 2, T_k - 2, {hs})
        q, k, v = randn(rng, B, T_q, hs) * 1.5, randn(rng, B, T_k, hs) * 1.5, randn(rng, B, T_k, hs_v)
        mask = _mask(_lengths(rng, B, T_k), T_k)
        expected = oracle.expected("masked_attention", q, k, v, mask, causal)
        what = (
            f"masked_attention(q, k, v of shapes {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}, "
            f"key_padding_mask with lengths {mask.sum(-1).tolist()}{', causal=True' if causal else ''})"
        )
        with explained(student, what):
            reply = student.call(
                "masked_attention",
                q,
                k,
                v,
                key_padding_mask=mask,
                causal=causal,
                cast=F64,
                full=True,
                record=not causal
                and (lambda q, k, v, mask=mask: oracle.expected("masked_attention", q, k, v, mask, False)),
            )
        check_value = expect_close_by_hand if not causal else (lambda r, *e, **kw: expect_close(r["value"], *e, **kw))
        check_value(reply, expected, what=what, mistakes=oracle.mistakes("masked_attention", q, k, v, mask, causal))


@check("masked_attention: non-contiguous inputs, every device")
def test_attention_devices(student, rng, device):
    q, k, v = randn(rng, 3, 4, 3), randn(rng, 3, 6, 3), randn(rng, 3, 6, 2)
    mask = _mask(_lengths(rng, 3, 6, partial_max=3), 6)
    what = f"masked_attention(q, k, v non-contiguous, float32 on {device}, causal=True)"
    expected = oracle.expected("masked_attention", q, k, v, mask, True)
    with explained(student, what):
        got = student.call(
            "masked_attention",
            q,
            k,
            v,
            key_padding_mask=mask,
            causal=True,
            to=device,
            cast=torch.float32,
            noncontig=True,
        )
    expect_close(got, expected, what=what, mistakes=oracle.mistakes("masked_attention", q, k, v, mask, True))


def _module(student, rng, d_q, d_kv, d_out, nh, bias, dtype=F64, dropout=0.0):
    w = random_linear_weights(rng, layers(d_q, d_kv, d_out), bias=biased(bias))
    return module(student, d_q, d_kv, d_out, nh, bias=bias, dtype=dtype, dropout=dropout, weights=w, hint="")


@check("CrossAttention: random weights, shapes and lengths, nh in {1, 2, 4}", weight=2)
def test_random_cross(student, rng):
    for nh, bias in ((1, True), (2, False), (4, True)):
        # the head size, d_q, d_kv, T_k and d_out all differ, and none of d_q, d_kv and T_k is the head size
        # squared: a scale by the wrong one of them (or by hs, no square root) is named whatever the seed (with one
        # head, sqrt(d_out) is sqrt(hs): right; the case with two heads names it). T_q != T_k (padding applied to
        # the queries then fails on the shapes for every student)
        hs = rand_head_size(rng, nh, 2, 3)
        d_out = nh * hs
        apart = {hs, hs * hs, d_out}
        d_q = rand_int_except(rng, 2, 6, apart)
        d_kv = rand_int_except(rng, 2, 6, apart | {d_q})
        B, T_k = rand_int(rng, 3, 4), rand_int_except(rng, 3, 8, apart | {d_q, d_kv})
        T_q = rand_int_except(rng, 2, 7, {T_k})
        handle, w = _module(student, rng, d_q, d_kv, d_out, nh, bias)
        x, ctx = randn(rng, B, T_q, d_q), randn(rng, B, T_k, d_kv)
        mask = _mask(_lengths(rng, B, T_k), T_k)
        expected = oracle.expected("cross_attention", x, ctx, w, nh, mask)
        what = (
            f"CrossAttention({d_q}, {d_kv}, {d_out}, n_heads={nh}, qkv_bias={bias})(x {tuple(x.shape)}, "
            f"context {tuple(ctx.shape)}, key_padding_mask with lengths {mask.sum(-1).tolist()})"
        )
        with explained(student, what):
            reply = handle(
                x,
                ctx,
                mask,
                cast=F64,
                full=True,
                record=nh == 2
                and (lambda x, c, m, w=w, nh=nh, mask=mask: oracle.expected("cross_attention", x, c, w, nh, mask)),
            )
        expect_close_by_hand(
            reply, expected, what=what, mistakes=oracle.mistakes("cross_attention", x, ctx, w, nh, mask)
        )


@check("CrossAttention: equals torch.nn.MultiheadAttention on random weights, inputs and lengths")
def test_random_torch_mha(student, rng):
    nh = (2, 4)[rand_int(rng, 0, 1)]
    d = nh * rand_head_size(rng, nh, 3, 5)  # head size >= 3, != n_heads, n_heads ** 2 (see rand_head_size)
    # d_kv and T_k are neither the head size nor d: a scale by the wrong size shows whatever the seed
    d_kv = rand_int_except(rng, 2, 6, {d // nh, d})
    handle, w = _module(student, rng, d, d_kv, d, nh, True)
    B, T_k = 3, rand_int_except(rng, 3, 8, {d // nh, d, d_kv})
    # T_q != T_k: padding applied to the queries fails on the shapes for every student (it is told apart, and
    # named, only where T_q == T_k: the public checks' square inputs)
    x, ctx = randn(rng, B, rand_int_except(rng, 2, 8, {T_k}), d), randn(rng, B, T_k, d_kv)
    n = _lengths(rng, B, T_k).clamp(min=1)  # nn.MultiheadAttention gives NaN where a query sees no key
    mask = _mask(n, T_k)
    what = (
        f"CrossAttention({d}, {d_kv}, {d}, n_heads={nh}, qkv_bias=True)(x {tuple(x.shape)}, context "
        f"{tuple(ctx.shape)}, key_padding_mask with lengths {n.tolist()})"
    )
    with explained(student, what):
        got = handle(x, ctx, mask, cast=F64)
    expect_close(
        got,
        p.torch_cross_attention(x, ctx, w, nh, mask),
        what=what + ", compared with nn.MultiheadAttention given key_padding_mask = ~mask",
        mistakes=oracle.mistakes("cross_attention", x, ctx, w, nh, mask),
    )


@check("CrossAttention: non-contiguous inputs, every device")
def test_cross_devices(student, rng, device):
    handle, w = _module(student, rng, 4, 3, 6, 3, False, dtype=torch.float32)
    handle.to(device, torch.float32)
    x, ctx = randn(rng, 3, 5, 4), randn(rng, 3, 6, 3)
    mask = _mask(_lengths(rng, 3, 6), 6)
    expected = oracle.expected("cross_attention", x, ctx, w, 3, mask)
    what = f"CrossAttention(4, 3, 6, n_heads=3)(x, context non-contiguous, float32 on {device})"
    with explained(student, what):
        got = handle(x, ctx, mask, to=device, cast=torch.float32, noncontig=True)
    expect_close(got, expected, what=what, mistakes=oracle.mistakes("cross_attention", x, ctx, w, 3, mask))


@check("CrossAttention: with dropout > 0, eval() gives the reference")
def test_dropout_eval(student, rng):
    handle, w = _module(student, rng, 4, 3, 6, 2, False, dropout=0.4)
    handle.train(False)
    x, ctx = randn(rng, 3, 5, 4), randn(rng, 3, 6, 3)
    mask = _mask(_lengths(rng, 3, 6), 6)
    expected = oracle.expected("cross_attention", x, ctx, w, 2, mask)
    what = "CrossAttention(4, 3, 6, n_heads=2, dropout=0.4) after .eval()"
    with explained(student, what):
        got = handle(x, ctx, mask, cast=F64)
    expect_close(
        got,
        expected,
        what=what + " (dropout must do nothing)",
        mistakes=oracle.mistakes("cross_attention", x, ctx, w, 2, mask),
    )


@check("CrossAttention: in training mode, dropout cuts attention weights (whole links) in every head")
def test_dropout_on_weights(student, rng):
    drop, nh, d_out = 0.5, 2, 6
    w = random_linear_weights(rng, layers(4, 3, d_out), bias=biased(False))
    w["out_proj.weight"] = torch.eye(d_out, dtype=F64)  # out_proj the identity: the heads' outputs side by side
    w["out_proj.bias"] = torch.zeros(d_out, dtype=F64)
    handle, w = module(student, 4, 3, d_out, nh, dropout=drop, weights=w, hint="")
    x, ctx = randn(rng, 3, 4, 4), randn(rng, 3, 5, 3)
    mask = _mask(_lengths(rng, 3, 5), 5)
    what = f"CrossAttention(4, 3, {d_out}, n_heads={nh}, dropout={drop})(x (3, 4, 4), context (3, 5, 3), mask)"
    handle.train(False)
    with explained(student, what):
        evaluated = handle(x, ctx, mask, cast=F64)
    expected = oracle.expected("cross_attention", x, ctx, w, nh, mask)
    credited(evaluated, expected, what + " after .eval()", oracle.mistakes("cross_attention", x, ctx, w, nh, mask))
    heads = oracle.expected("cross_attention_heads", x, ctx, w, nh, mask)
    expect_dropout_in_training(student, handle, (x, ctx, mask), expected, heads, drop, what)


@check(
    "float16 and bfloat16 (CPU): values in half precision, no NaN rows (hidden keys filled with -inf: a large number overflows)"
)
def test_half(student):
    # the same inputs for every student: at half tolerance, whether a small change (a scale by hs instead of its
    # root, with these small scores) shows depends on the draw, and a verdict may not depend on the seed
    rng = torch.Generator().manual_seed(2609)
    # at half tolerance a mistake must change the answer by far: one real key in the partly padded sequence and
    # small scores (nearly even weights), so that its padded keys hold most of the weight of every later query;
    # values of 1 or more (a weight lost is a value lost). Values as wide as the keys: the value size's scale is
    # the random checks' to catch, and gives nothing to catch here
    # keys as wide as they are many (6): a scale by the number of keys is the random checks' to catch, and gives the
    # same numbers here for every student (at half tolerance, a scale mistake's small change would pass for some
    # draws and not others)
    q, k, v = randn(rng, 3, 4, 6) * 0.3, randn(rng, 3, 6, 6), randn(rng, 3, 6, 6).abs() + 1
    mask = _mask(_lengths(rng, 3, 6, partial_max=1), 6)
    w = random_linear_weights(rng, layers(4, 3, 6), bias={"W_query", "W_key", "W_value", "out_proj"})
    x, ctx = randn(rng, 3, 5, 4), randn(rng, 3, 6, 3)
    for dtype in HALVES:
        name = str(dtype)[6:]
        qh, kh, vh = (rounded(z, dtype) for z in (q, k, v))
        what = f"masked_attention(q, k, v {name}, key_padding_mask with lengths {mask.sum(-1).tolist()}, causal=True)"
        with explained(student, what):
            got = student.call("masked_attention", qh, kh, vh, key_padding_mask=mask, causal=True, cast=dtype)
        expect_half(
            got,
            oracle.expected("masked_attention", qh, kh, vh, mask, True),
            dtype,
            what=what,
            mistakes=oracle.mistakes("masked_attention", qh, kh, vh, mask, True),
        )
        handle = new_module(
            student,
            "CrossAttention",
            4,
            3,
            6,
            2,
            qkv_bias=True,
            weights=w,
            dtype=dtype,
            what="CrossAttention(4, 3, 6, n_heads=2, qkv_bias=True)",
        )
        wh, xh, ch = {n: rounded(t, dtype) for n, t in handle.held.items()}, rounded(x, dtype), rounded(ctx, dtype)
        what = f"CrossAttention(4, 3, 6, n_heads=2) in {name} (x, context {name}, key_padding_mask)"
        with explained(student, what):
            got = handle(xh, ch, mask, cast=dtype)
        expect_half(
            got,
            oracle.expected("cross_attention", xh, ch, wh, 2, mask),
            dtype,
            what=what,
            mistakes=oracle.mistakes("cross_attention", xh, ch, wh, 2, mask),
        )
