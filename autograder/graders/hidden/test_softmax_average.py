"""Stage 3, hidden checks: random sizes and inputs (seeded per result), odd shapes, every device."""

import torch

from autograder import oracle
from autograder.checks import HALVES, check, diagnose, expect_close, expect_half, expect_shape, fail
from autograder.graders.inputs import randn, rounded
from autograder.sandbox.values import Call

STAGE = "softmax_average"


@check("mask and weights: random sizes T", weight=2)
def test_random_sizes(student, rng):
    sizes = torch.randint(2, 40, (3,), generator=rng).tolist()
    answers = iter(
        student.call_all(
            call
            for T in sizes
            for call in (Call("causal_mask", T), Call("masked_uniform_weights", T, dtype=torch.float64))
        )
    )
    for T in sizes:
        got = expect_shape(next(answers), (T, T), f"causal_mask({T})").t.to(torch.bool)
        want = oracle.expected("causal_mask", T)
        if not torch.equal(got, want):
            t, s = (got != want).nonzero()[0].tolist()
            mistake = diagnose(
                got.double(),
                {k: v.double() for k, v in oracle.mistakes("causal_mask", T).items()},
                0,
                0,
                expected=want.double(),
            )
            fail(
                f"causal_mask({T})[{t}, {s}] is {bool(got[t, s])}: the mask must be True exactly where s <= t "
                "(column index <= row index)" + (f"\n  this looks like a known mistake: {mistake}" if mistake else ""),
                mistake,
            )
        expect_close(
            next(answers),
            oracle.expected("causal_mean_weights", T),
            what=f"masked_uniform_weights({T})",
            mistakes=oracle.mistakes("masked_uniform_weights", T),
        )


@check("average: random inputs, extra leading dims, T = 1", weight=3)
def test_random_inputs(student, rng):
    # T = 13: longer than any fixed input (a table of weights cut to 8 steps fails); T = 1 last
    shapes = [(3, 5, 2), (2, 3, 4, 6), (5, 9), (1, 8, 8), (2, 13, 3), (1, 1, 3)]
    xs = [randn(rng, *shape) for shape in shapes]
    answers = student.call_all(Call("causal_mean_softmax", x, cast=torch.float64) for x in xs)
    for shape, x, got in zip(shapes, xs, answers):
        expect_close(
            got,
            oracle.expected("causal_mean_loop", x),
            what=f"causal_mean_softmax(x {shape})",
            mistakes=oracle.mistakes("causal_mean_softmax", x),
        )


@check("average: non-contiguous input, every device")
def test_noncontig_devices(student, rng, device):
    x = randn(rng, 2, 3, 7, 4)
    expect_close(
        student.call("causal_mean_softmax", x, cast=torch.float32, to=device, noncontig=True),
        oracle.expected("causal_mean_loop", x),
        what=f"causal_mean_softmax(x (2, 3, 7, 4) non-contiguous, {device})",
        mistakes=oracle.mistakes("causal_mean_softmax", x),
    )


@check(
    "float16 and bfloat16 (CPU): values in half precision, the dtype kept (a large negative fill overflows there: -inf)"
)
def test_half(student, rng):
    x = randn(rng, 2, 6, 4)
    xhs = [rounded(x, dtype) for dtype in HALVES]
    answers = iter(
        student.call_all(
            call
            for xh, dtype in zip(xhs, HALVES)
            for call in (Call("masked_uniform_weights", 6, dtype=dtype), Call("causal_mean_softmax", xh, cast=dtype))
        )
    )
    for dtype, xh in zip(HALVES, xhs):
        expect_half(
            next(answers),
            oracle.expected("causal_mean_weights", 6),
            dtype,
            what=f"masked_uniform_weights(6, dtype={str(dtype)[6:]})",
            mistakes=oracle.mistakes("masked_uniform_weights", 6),
        )
        expect_half(
            next(answers),
            oracle.expected("causal_mean_loop", xh),
            dtype,
            what=f"causal_mean_softmax(x {str(dtype)[6:]})",
            mistakes=oracle.mistakes("causal_mean_softmax", xh),
        )
