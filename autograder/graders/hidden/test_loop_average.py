"""Stage 1, hidden checks: random inputs (seeded per result), odd shapes, every device."""

import torch

from autograder import oracle
from autograder.checks import check, expect_close
from autograder.graders.inputs import randn

STAGE = "loop_average"


@check("random inputs, varied shapes (T = 1, T != C, B > 1)", weight=2)
def test_random_shapes(student, rng):
    for shape in [(1, 1, 4), (3, 7, 2), (2, 4, 9), (4, 8, 2)]:
        x = randn(rng, *shape)
        expect_close(student.call("causal_mean_loop", x, cast=torch.float64), oracle.expected("causal_mean_loop", x),
                     what=f"causal_mean_loop(x {shape})", mistakes=oracle.mistakes("causal_mean_loop", x))


@check("non-contiguous input")
def test_noncontiguous(student, rng):
    x = randn(rng, 2, 6, 4)
    expect_close(student.call("causal_mean_loop", x, cast=torch.float64, noncontig=True),
                 oracle.expected("causal_mean_loop", x), what="causal_mean_loop(x non-contiguous)")


@check("values on every device")
def test_devices(student, rng, device):
    x = randn(rng, 2, 5, 3)
    expect_close(student.call("causal_mean_loop", x, cast=torch.float32, to=device),
                 oracle.expected("causal_mean_loop", x), what=f"causal_mean_loop(x) on {device}")
