"""Stage 1, hidden checks: random inputs (seeded per result), odd shapes, half precision, every device."""

import torch

from autograder import oracle
from autograder.checks import HALVES, check, expect_close, expect_half
from autograder.graders.attention import explained
from autograder.graders.inputs import randn, rounded
from autograder.sandbox.values import Call

STAGE = "loop_average"


@check("random inputs, varied shapes (T = 1, T != C, B > 1, leading dims)", weight=4)
def test_random_shapes(student, rng):
    # T = 1 last: with one step, mistakes cannot be told apart (a label there would guess); T = 13: longer than
    # any fixed input (a table of weights cut to 8 steps fails)
    shapes = [(3, 7, 2), (2, 4, 9), (4, 8, 2), (2, 2, 3, 4), (5, 3), (2, 13, 3), (1, 1, 4)]
    xs = [randn(rng, *shape) for shape in shapes]
    answers = student.call_all(Call("causal_mean_loop", x, cast=torch.float64) for x in xs)
    for shape, x, got in zip(shapes, xs, answers):
        expect_close(
            got,
            oracle.expected("causal_mean_loop", x),
            what=f"causal_mean_loop(x {shape})",
            mistakes=oracle.mistakes("causal_mean_loop", x),
        )


@check("non-contiguous input with two leading dims (..., T, C)")
def test_noncontiguous(student, rng):
    x = randn(rng, 2, 3, 6, 4)  # two leading dims: x.view(-1, T, C) cannot merge them in a non-contiguous layout
    what = "causal_mean_loop(x (2, 3, 6, 4) non-contiguous)"
    with explained(student, what):  # a .view that cannot regroup the input is explained (use reshape)
        got = student.call("causal_mean_loop", x, cast=torch.float64, noncontig=True)
    expect_close(got, oracle.expected("causal_mean_loop", x), what=what)


@check("values on every device")
def test_devices(student, rng, device):
    x = randn(rng, 2, 5, 3)
    expect_close(
        student.call("causal_mean_loop", x, cast=torch.float32, to=device),
        oracle.expected("causal_mean_loop", x),
        what=f"causal_mean_loop(x) on {device}",
    )


@check("float16 and bfloat16 inputs (CPU)")
def test_half(student, rng):
    x = randn(rng, 2, 6, 4)
    xhs = [rounded(x, dtype) for dtype in HALVES]
    answers = student.call_all(Call("causal_mean_loop", xh, cast=dtype) for xh, dtype in zip(xhs, HALVES))
    for dtype, xh, got in zip(HALVES, xhs, answers):
        expect_half(
            got,
            oracle.expected("causal_mean_loop", xh),
            dtype,
            what=f"causal_mean_loop(x {str(dtype)[6:]})",
            mistakes=oracle.mistakes("causal_mean_loop", xh),
        )
