"""Stage 3, hidden checks: random sizes and inputs (seeded per result), odd shapes, every device."""

import torch

from autograder import oracle
from autograder.checks import check, diagnose, expect_close, expect_shape, fail
from autograder.graders.inputs import randn

STAGE = "softmax_average"


@check("mask and weights: random sizes T")
def test_random_sizes(student, rng):
    for T in torch.randint(2, 40, (3,), generator=rng).tolist():
        got = expect_shape(student.call("causal_mask", T), (T, T), f"causal_mask({T})").t.to(torch.bool)
        want = oracle.expected("causal_mask", T)
        if not torch.equal(got, want):
            t, s = (got != want).nonzero()[0].tolist()
            mistake = diagnose(got.double(), {k: v.double() for k, v in oracle.mistakes("causal_mask", T).items()},
                               0, 0)
            fail(f"causal_mask({T})[{t}, {s}] is {bool(got[t, s])}: the mask must be True exactly where s <= t "
                 "(column index <= row index)"
                 + (f"\n  this looks like a known mistake: {mistake}" if mistake else ""), mistake)
        got = student.call("masked_uniform_weights", T, dtype=torch.float64)
        expect_close(got, oracle.expected("causal_mean_weights", T), what=f"masked_uniform_weights({T})",
                     mistakes=oracle.mistakes("masked_uniform_weights", T))


@check("average: random inputs, extra leading dims, T = 1", weight=2)
def test_random_inputs(student, rng):
    for shape in [(3, 5, 2), (2, 3, 4, 6), (5, 9), (1, 8, 8), (1, 1, 3)]:
        x = randn(rng, *shape)
        expect_close(student.call("causal_mean_softmax", x, cast=torch.float64), oracle.expected("causal_mean_loop", x),
                     what=f"causal_mean_softmax(x {shape})", mistakes=oracle.mistakes("causal_mean_softmax", x))


@check("average: non-contiguous input, every device")
def test_noncontig_devices(student, rng, device):
    x = randn(rng, 2, 7, 4)
    expect_close(student.call("causal_mean_softmax", x, cast=torch.float32, to=device, noncontig=True),
                 oracle.expected("causal_mean_loop", x), what=f"causal_mean_softmax(x non-contiguous, {device})",
                 mistakes=oracle.mistakes("causal_mean_softmax", x))
