"""Stage 2, hidden checks."""

import torch

from autograder import oracle
from autograder.checks import check, expect_close
from autograder.graders.inputs import randn

STAGE = "tril_average"


@check("random inputs, extra leading dims, T = 1", weight=2)
def test_random(student, rng):
    for shape in [(1, 1, 3), (3, 5, 2), (2, 3, 4, 6), (5, 9)]:
        x = randn(rng, *shape)
        expect_close(student.call("causal_mean_matmul", x, cast=torch.float64), oracle.expected("causal_mean_loop", x),
                     what=f"causal_mean_matmul(x {shape})", mistakes=oracle.mistakes("causal_mean_matmul", x))


@check("non-contiguous input, every device")
def test_noncontig_devices(student, rng, device):
    x = randn(rng, 2, 7, 4)
    expect_close(student.call("causal_mean_matmul", x, cast=torch.float32, to=device, noncontig=True),
                 oracle.expected("causal_mean_loop", x), what=f"causal_mean_matmul(x non-contiguous, {device})")
