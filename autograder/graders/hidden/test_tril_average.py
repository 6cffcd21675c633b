"""Stage 2, hidden checks."""

import torch

from autograder import oracle
from autograder.checks import HALVES, check, expect_close, expect_half
from autograder.graders.inputs import randn, rounded
from autograder.sandbox.values import Call

STAGE = "tril_average"


@check("random inputs, extra leading dims, T = 1", weight=3)
def test_random(student, rng):
    # T = 1 last: with one step, mistakes cannot be told apart (a label there would guess); T = 13: longer than
    # any fixed input (a table of weights cut to 8 steps fails)
    shapes = [(3, 5, 2), (2, 3, 4, 6), (5, 9), (2, 13, 3), (1, 1, 3)]
    xs = [randn(rng, *shape) for shape in shapes]
    answers = student.call_all(Call("causal_mean_matmul", x, cast=torch.float64) for x in xs)
    for shape, x, got in zip(shapes, xs, answers):
        expect_close(
            got,
            oracle.expected("causal_mean_loop", x),
            what=f"causal_mean_matmul(x {shape})",
            mistakes=oracle.mistakes("causal_mean_matmul", x),
        )


@check("non-contiguous input, every device")
def test_noncontig_devices(student, rng, device):
    x = randn(rng, 2, 3, 7, 4)
    expect_close(
        student.call("causal_mean_matmul", x, cast=torch.float32, to=device, noncontig=True),
        oracle.expected("causal_mean_loop", x),
        what=f"causal_mean_matmul(x (2, 3, 7, 4) non-contiguous, {device})",
    )


@check("float16 and bfloat16 (CPU)")
def test_half(student, rng):
    x = randn(rng, 2, 6, 4)
    xhs = [rounded(x, dtype) for dtype in HALVES]
    answers = iter(
        student.call_all(
            call
            for xh, dtype in zip(xhs, HALVES)
            for call in (Call("causal_mean_weights", 6, dtype=dtype), Call("causal_mean_matmul", xh, cast=dtype))
        )
    )
    for dtype, xh in zip(HALVES, xhs):
        expect_half(
            next(answers),
            oracle.expected("causal_mean_weights", 6),
            dtype,
            what=f"causal_mean_weights(6, dtype={str(dtype)[6:]})",
        )
        expect_half(
            next(answers),
            oracle.expected("causal_mean_loop", xh),
            dtype,
            what=f"causal_mean_matmul(x {str(dtype)[6:]})",
            mistakes=oracle.mistakes("causal_mean_matmul", xh),
        )
