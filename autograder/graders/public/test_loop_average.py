"""Stage 1, public checks: the running average with loops.

Every check of an output counts only together with correct values (see ``checking.credited``): an answer that
computes nothing earns nothing here."""

import torch

from autograder import oracle
from autograder.checks import check, credited, expect_close, expect_meta, expect_precise, expect_shape, expect_unchanged
from autograder.graders.inputs import fixed
from autograder.sandbox.values import Call

STAGE = "loop_average"
X = fixed(2, 5, 3, seed=1)


def _expected(x):
    return oracle.expected("causal_mean_loop", x)


@check("output has the input's shape")
def test_shape(student):
    got = expect_shape(
        student.call("causal_mean_loop", X, cast=torch.float32), X.shape, "causal_mean_loop(x (2, 5, 3))"
    )
    credited(got, _expected(X), "causal_mean_loop(x (2, 5, 3))")


@check("values equal the running mean", weight=3)
def test_values(student):
    got = student.call("causal_mean_loop", X, cast=torch.float64)
    expect_close(got, _expected(X), what="causal_mean_loop(x)", mistakes=oracle.mistakes("causal_mean_loop", X))


@check("first step equals x[:, 0]")
def test_first_step(student):
    got = expect_shape(student.call("causal_mean_loop", X, cast=torch.float32), X.shape, "causal_mean_loop(x)")
    expect_close(got.t[:, 0], X[:, 0], what="out[:, 0] (the average of one step is that step)", dtype=torch.float32)
    credited(got, _expected(X), "causal_mean_loop(x)")


@check("extra leading dims (..., T, C) and one sequence (T, C)")
def test_leading_dims(student):
    shapes = ((2, 3, 4, 2), (6, 3))
    xs = [fixed(*shape, seed=11) for shape in shapes]
    answers = student.call_all(Call("causal_mean_loop", x, cast=torch.float64) for x in xs)
    for shape, x, got in zip(shapes, xs, answers):
        expect_close(
            got,
            _expected(x),
            what=f"causal_mean_loop(x {shape}): any number of leading dims, as the docstring says",
            mistakes=oracle.mistakes("causal_mean_loop", x),
        )


@check("input unchanged")
def test_input_unchanged(student):
    expect_unchanged(
        student.call("causal_mean_loop", X, cast=torch.float32, full=True, return_inputs=True),
        "causal_mean_loop",
        _expected(X),
    )


@check("dtype and device follow the input")
def test_dtype_device(student, device):
    dtypes = (torch.float32, torch.float64)
    answers = student.call_all(Call("causal_mean_loop", X, cast=dtype, to=device) for dtype in dtypes)
    for dtype, got in zip(dtypes, answers):
        expect_meta(
            got,
            dtype=dtype,
            device=device,
            what=f"causal_mean_loop(x {str(dtype)[6:]} on {device})",
            expected=_expected(X),
        )


@check("keeps the input's precision (float64 in, float64 accuracy out)")
def test_precision(student):
    expect_precise(
        student.call("causal_mean_loop", X, cast=torch.float64), _expected(X), what="causal_mean_loop(x float64)"
    )
