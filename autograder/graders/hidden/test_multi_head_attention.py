"""Stage 8, hidden checks: random shapes, weights and head counts (seeded per result), every device."""

import torch

from autograder import oracle
from autograder.checks import HALVES, check, credited, expect_close, expect_half, expect_shape
from autograder.graders.attention import (
    biased,
    expect_close_by_hand,
    expect_dropout_in_training,
    explained,
    random_linear_weights,
)
from autograder.graders.inputs import randn, rounded, rand_head_size, rand_int, rand_int_except
from autograder.graders.public.test_multi_head_attention import layers, module, torch_mha

STAGE = "multi_head_attention"
F64 = torch.float64


def _module(student, rng, d_in, d_out, nh, L, bias, dtype=F64, dropout=0.0):
    w = random_linear_weights(rng, layers(d_in, d_out), bias=biased(bias))
    return module(student, d_in, d_out, nh, L, bias=bias, dtype=dtype, weights=w, dropout=dropout, hint="")


@check("split_heads and merge_heads on random shapes (two leading dims too), round trip")
def test_random_split_merge(student, rng):
    for nh in (1, 2, 4):
        # with one step (T = 1) a split or merge without transpose cannot show: several heads get T >= 2
        # and a head size of 2 or more: with one feature per head, interleaving features changes nothing
        B, T, hs = rand_int(rng, 1, 3), rand_int(rng, 1 if nh == 1 else 2, 7), rand_int(rng, 1 if nh == 1 else 2, 4)
        lead = (B, 2) if nh == 2 else (B,)  # the stubs promise any leading dims
        x = randn(rng, *lead, T, nh * hs)
        what = f"split_heads(x {tuple(x.shape)}, {nh})"
        with explained(student, what):
            heads = expect_shape(student.call("split_heads", x, nh, cast=F64), (*lead, nh, T, hs), what)
        expect_close(
            heads, oracle.expected("split_heads", x, nh), what=what, mistakes=oracle.mistakes("split_heads", x, nh)
        )
        what = f"merge_heads(x {(*lead, nh, T, hs)})"
        with explained(student, what):
            back = student.call("merge_heads", heads.t, cast=F64)
        expect_close(
            back,
            x,
            what=what + " should give back the x that was split",
            mistakes=oracle.mistakes("merge_heads", heads.t),
        )


def _scales_apart(d_in, d_out, nh, T):
    """Whether the known scales of a MultiHeadAttention of d_in, d_out and nh heads at T steps
    (oracles/multi_head_attention.py) all differ, the right one sqrt(head_size) among them, so that each wrong one
    gives numbers of its own: their squares head_size, d_out, d_out / nh**2, d_out * nh**2, d_in, d_in // nh, 1,
    head_size**2, nh, T and 1 / head_size (multiplied instead of divided), compared as integers once multiplied
    by nh**2 * head_size."""
    hs = d_out // nh
    k = nh * nh * hs
    squares = [s * k for s in (hs, d_out, d_out * nh * nh, d_in, d_in // nh, 1, hs * hs, nh, T)]
    squares += [d_out * hs, nh * nh]  # d_out / nh**2 and 1 / head_size, times k
    return len(set(squares)) == len(squares)


@check("MultiHeadAttention: random weights, qkv_bias, nh in {1, 2, 4}, T <= context_length", weight=2)
def test_random_mha(student, rng):
    L = 8
    # The check stops at its first failing case: there the sizes tell the known mistakes apart for every student.
    # Two heads come first (one head cannot tell sqrt(d_in) from sqrt(d_in // nh), nor sqrt(n_heads) from no
    # scale, nor split or merge mistakes from the right answer), in the recorded call: an answer right by
    # coincidence there would be replayed against the reference on other inputs and fail as unverifiable.
    for nh, bias in ((2, False), (1, True), (4, True)):
        if nh == 2:
            # T = 5 or 6: a slice of the mask buffer from a wrong corner has numbers of its own only there
            # (self.mask[:T, -T:] hides every key of every query, NaN everywhere, for T <= 4, the diagonal too at
            # T = 7, and is right at T = 8); T is neither the head size (3 or 5) nor d_out; d_in is drawn from those at
            # which every scale differs (_scales_apart: 8, 14 or 15 with head size 3, 7, 8, 9, 14 or 15 with 5)
            hs = rand_head_size(rng, nh, 3, 5)
            d_out, T = nh * hs, rand_int_except(rng, 5, 6, {hs, nh * hs})
            d_in = rand_int_except(rng, 2, 15, {d for d in range(2, 16) if not _scales_apart(d, d_out, nh, T)})
        else:
            # with one step (T = 1) how the heads are split, merged and scaled cannot show: several heads get
            # T >= 2; a head size >= 2, never d_in (nor n_heads, see rand_head_size)
            T = rand_int(rng, 1 if nh == 1 else 2, L)
            d_in, d_out = rand_int(rng, 2, 6), nh * rand_head_size(rng, nh, 2, 3)
            d_in += d_in == d_out // nh
        handle, w = _module(student, rng, d_in, d_out, nh, L, bias)
        x = randn(rng, 2, T, d_in)
        what = f"MultiHeadAttention({d_in}, {d_out}, n_heads={nh}, context_length={L}, qkv_bias={bias})(x (2, {T}, {d_in}))"
        with explained(student, what):
            reply = handle(
                x,
                cast=F64,
                record=nh == 2 and (lambda x, w=w, nh=nh: oracle.expected("multi_head_attention", x, w, nh)),
                full=True,
            )
        expect_close_by_hand(
            reply,
            oracle.expected("multi_head_attention", x, w, nh),
            what=what,
            mistakes=oracle.mistakes("multi_head_attention", x, w, nh, context_length=L),
        )


@check("MultiHeadAttention: equals torch.nn.MultiheadAttention on random weights and inputs")
def test_random_torch_mha(student, rng):
    nh = (2, 4)[rand_int(rng, 0, 1)]  # several heads: with one, how heads are split and merged cannot show
    hs = rand_head_size(rng, nh, 3, 5)  # head size >= 3, != n_heads, n_heads ** 2 (see rand_head_size)
    d = nh * hs
    handle, w = _module(student, rng, d, d, nh, 8, True)
    # T < context_length whatever the seed: mask rows sliced from the wrong end (self.mask[-T:]) show only there,
    # and a slice from the top-right corner (self.mask[:T, -T:]) has numbers of its own only at T = 5 or 6 (see
    # test_random_mha); T >= 4: this call is recorded. T is neither the head size (a scale by sqrt(T) would be
    # right) nor d (it would be the scale by sqrt(d_out)): the known scales then all differ (see _scales_apart),
    # but for those that d_in == d_out makes equal: sqrt(d_in) = sqrt(d_out), sqrt(d_in // nh) = the right one
    T = rand_int_except(rng, 5, 6, {hs, d})
    x = randn(rng, 3, T, d)
    what = f"MultiHeadAttention({d}, {d}, n_heads={nh}, context_length=8, qkv_bias=True)(x {tuple(x.shape)})"
    with explained(student, what):
        reply = handle(x, cast=F64, record=lambda x: torch_mha(x, w, nh), full=True)
    expect_close_by_hand(
        reply,
        torch_mha(x, w, nh),
        what=what + ", compared with nn.MultiheadAttention",
        mistakes=oracle.mistakes("multi_head_attention", x, w, nh, context_length=8),
    )


@check("MultiHeadAttention: non-contiguous input, every device")
def test_devices(student, rng, device):
    handle, w = _module(student, rng, 4, 6, 3, 8, False, dtype=torch.float32)
    handle.to(device, torch.float32)
    x = randn(rng, 2, 7, 4)
    what = f"MultiHeadAttention(4, 6, n_heads=3, context_length=8)(x non-contiguous, float32 on {device})"
    with explained(student, what):
        reply = handle(
            x,
            to=device,
            cast=torch.float32,
            noncontig=True,
            full=True,
            record=lambda x: oracle.expected("multi_head_attention", x, w, 3),
        )
    expect_close_by_hand(
        reply,
        oracle.expected("multi_head_attention", x, w, 3),
        what=what,
        mistakes=oracle.mistakes("multi_head_attention", x, w, 3, context_length=8),
    )


@check("MultiHeadAttention: with dropout > 0, eval() gives the reference")
def test_dropout_eval(student, rng):
    handle, w = _module(student, rng, 4, 6, 2, 8, False, dropout=0.4)
    handle.train(False)
    x = randn(rng, 2, 8, 4)
    what = "MultiHeadAttention(4, 6, n_heads=2, context_length=8, dropout=0.4) after .eval()"
    with explained(student, what):
        got = handle(x, cast=F64)
    expect_close(
        got,
        oracle.expected("multi_head_attention", x, w, 2),
        what=what + " (dropout must do nothing)",
        mistakes=oracle.mistakes("multi_head_attention", x, w, 2, context_length=8),
    )


@check("MultiHeadAttention: in training mode, dropout cuts attention weights (whole links) in every head")
def test_dropout_on_weights(student, rng):
    p, nh, d_out = 0.5, 2, 6
    w = random_linear_weights(rng, layers(4, d_out), bias=biased(False))
    w["out_proj.weight"] = torch.eye(d_out, dtype=F64)  # out_proj the identity: the heads' outputs side by side
    w["out_proj.bias"] = torch.zeros(d_out, dtype=F64)
    handle, w = module(student, 4, d_out, nh, 8, weights=w, dropout=p, hint="")
    x = randn(rng, 2, 5, 4)
    what = f"MultiHeadAttention(4, {d_out}, n_heads={nh}, context_length=8, dropout={p})(x (2, 5, 4))"
    handle.train(False)
    with explained(student, what):
        evaluated = handle(x, cast=F64)
    expected = oracle.expected("multi_head_attention", x, w, nh)
    credited(
        evaluated,
        expected,
        what + " after .eval()",
        oracle.mistakes("multi_head_attention", x, w, nh, context_length=8),
    )
    heads = oracle.expected("multi_head_attention_heads", x, w, nh)
    expect_dropout_in_training(student, handle, (x,), expected, heads, p, what)


# Identity projections and one head: the last step's key scores about 99 with every earlier query (a future score
# whose exp overflows float16 and bfloat16), every visible score about 1.4. Fixed, so that an exp taken before
# masking fails for every seed.
_EYE = torch.eye(2, dtype=F64)
_FAR_FUTURE_W = {
    **{f"{n}.weight": _EYE for n in ("W_query", "W_key", "W_value", "out_proj")},
    "out_proj.bias": torch.zeros(2, dtype=F64),
}
_FAR_FUTURE_X = torch.tensor([[[1.0, 1.0], [1.0, -1.0], [1.0, 1.0], [70.0, 70.0]]], dtype=F64)


@check(
    "float16 and bfloat16 (CPU): values in half precision, the dtype kept (a large negative fill overflows there: -inf)"
)
def test_half(student, rng):
    # head size 8, d_in 4, 2 heads: every wrong scale we know of is at least 1.4 times off, at least 3.8 times
    # float16's tolerance on every draw (300 seeds; head size 3 with d_in 4 came within it for 1 seed in 40)
    x = randn(rng, 2, 6, 4)
    for dtype in HALVES:
        handle, w = _module(student, rng, 4, 16, 2, 8, True, dtype=dtype)
        far, w_far = module(student, 2, 2, 1, 8, dtype=dtype, weights=_FAR_FUTURE_W, hint="")
        for h, wd, xd, note in ((handle, w, x, ""), (far, w_far, _FAR_FUTURE_X, ", a future score of 99")):
            wh, xh = {n: rounded(t, dtype) for n, t in wd.items()}, rounded(xd, dtype)
            nh = 2 if h is handle else 1
            what = (
                f"MultiHeadAttention({xh.shape[-1]}, {wh['out_proj.weight'].shape[0]}, n_heads={nh}, context_length=8)"
                f" in {str(dtype)[6:]} (x {str(dtype)[6:]}{note})"
            )
            with explained(student, what):
                got = h(xh, cast=dtype)
            expect_half(
                got,
                oracle.expected("multi_head_attention", xh, wh, nh),
                dtype,
                what=what,
                mistakes=oracle.mistakes("multi_head_attention", xh, wh, nh, context_length=8),
            )
