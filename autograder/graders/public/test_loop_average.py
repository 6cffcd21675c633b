"""Stage 1, public checks: the running average with loops."""

import torch

from autograder import oracle
from autograder.checks import check, expect_close, expect_meta, expect_shape, expect_unchanged
from autograder.graders.inputs import fixed

STAGE = "loop_average"
X = fixed(2, 5, 3, seed=1)


@check("output has the input's shape")
def test_shape(student):
    expect_shape(student.call("causal_mean_loop", X, cast=torch.float32), X.shape, "causal_mean_loop(x (2, 5, 3))")


@check("values equal the running mean", weight=2)
def test_values(student):
    got = student.call("causal_mean_loop", X, cast=torch.float64)
    expect_close(got, oracle.expected("causal_mean_loop", X), what="causal_mean_loop(x)",
                 mistakes=oracle.mistakes("causal_mean_loop", X))


@check("first step equals x[:, 0]")
def test_first_step(student):
    got = expect_shape(student.call("causal_mean_loop", X, cast=torch.float32), X.shape, "causal_mean_loop(x)")
    expect_close(got.t[:, 0], X[:, 0], what="out[:, 0] (the average of one step is that step)",
                 dtype=torch.float32)


@check("input unchanged")
def test_input_unchanged(student):
    expect_unchanged(student.call("causal_mean_loop", X, cast=torch.float32, full=True, return_inputs=True),
                     "causal_mean_loop")


@check("dtype and device follow the input")
def test_dtype_device(student, device):
    for dtype in (torch.float32, torch.float64):
        expect_meta(student.call("causal_mean_loop", X, cast=dtype, to=device), dtype=dtype, device=device,
                    what=f"causal_mean_loop(x {str(dtype)[6:]} on {device})")
