"""Stage 5, public checks: scores q @ k^T / sqrt(d_k) on fixed queries and keys.

The statistical checks (variance ≈ 1 for every d_k, entropy) need many random samples: they are hidden.
"""

import torch

from autograder import oracle
from autograder.checks import (
    check,
    credited,
    error_line,
    expect_close,
    expect_meta,
    expect_precise,
    expect_shape,
    expect_unchanged,
    fail,
    uses_dot_T,
)
from autograder.graders.inputs import fixed
from autograder.sandbox.errors import StudentCodeError
from autograder.sandbox.values import Call

STAGE = "variance_scaling"
KT_BATCHED = "k.T on batched input (reverses every dim; use k.transpose(-2, -1))"

# d_k = 8 and T_q = 3 != T_k = 5: dividing by sqrt(T), by d_k or by d_k / 2 all give different numbers
Q = fixed(2, 3, 8, seed=50)
K = fixed(2, 5, 8, seed=51)
Q2, K2 = fixed(4, 6, seed=52), fixed(7, 6, seed=53)  # one sequence, no batch dim
Q4, K4 = fixed(2, 2, 3, 5, seed=54), fixed(2, 2, 6, 5, seed=55)  # extra leading dims
QC, KC = fixed(3, 2, 3, seed=56), fixed(3, 3, 3, seed=57)  # B = T_k = d_k: k.T runs without an error here


def scores(student, pairs, **kw):
    """The answers of scaled_scores(q, k) for each (q, k) of ``pairs`` (one round trip for all), in order,
    explaining the usual reason batched input crashes: k.T reverses every dim."""
    answers = iter(student.call_all(Call("scaled_scores", q, k, **kw) for q, k in pairs))
    for q, k in pairs:
        try:
            yield next(answers)
        except StudentCodeError as exc:
            code = error_line(exc.error, getattr(student, "source", ""))
            if k.dim() > 2 and uses_dot_T(code):
                fail(
                    f"scaled_scores(q {tuple(q.shape)}, k {tuple(k.shape)}) failed on a batch: {exc}\n"
                    "On a tensor with more than two dims, k.T reverses all of them: (B, T, d_k) becomes (d_k, T, B). "
                    "Swap only the last two with k.transpose(-2, -1) (or k.mT).\n"
                    f"  this looks like a known mistake: {KT_BATCHED}",
                    KT_BATCHED,
                )
            raise


def _values(student, pairs):
    for (q, k), got in zip(pairs, scores(student, pairs, cast=torch.float64)):
        expect_close(
            got,
            oracle.expected("scaled_scores", q, k),
            what=f"scaled_scores(q {tuple(q.shape)}, k {tuple(k.shape)})",
            mistakes=oracle.mistakes("scaled_scores", q, k),
        )


def dtypes_on(device: str) -> tuple:
    """The dtypes to try on a device (MPS has no float64)."""
    return (torch.float32,) if device == "mps" else (torch.float32, torch.float64)


@check("shape (..., T_q, T_k)")
def test_shape(student):
    pairs = ((Q, K), (Q2, K2), (Q4, K4))
    for (q, k), got in zip(pairs, scores(student, pairs, cast=torch.float32)):
        shape = (*q.shape[:-1], k.shape[-2])
        what = f"scaled_scores(q {tuple(q.shape)}, k {tuple(k.shape)})"
        credited(
            expect_shape(got, shape, what),
            oracle.expected("scaled_scores", q, k),
            what,
            oracle.mistakes("scaled_scores", q, k),
        )


@check("values: q @ k^T / sqrt(d_k)", weight=3)
def test_values(student):
    _values(student, [(Q, K)])


@check("values: one sequence, extra leading dims", weight=2)
def test_values_shapes(student):
    _values(student, [(Q2, K2), (Q4, K4), (QC, KC)])


@check("inputs unchanged")
def test_inputs_unchanged(student):
    pairs = ((Q2, K2), (Q, K))
    for (q, k), reply in zip(pairs, scores(student, pairs, cast=torch.float32, full=True, return_inputs=True)):
        expect_unchanged(
            reply,
            "scaled_scores",
            oracle.expected("scaled_scores", q, k),
            oracle.mistakes("scaled_scores", q, k),
        )


@check("dtype and device follow the inputs")
def test_dtype_device(student, device):
    for dtype in dtypes_on(device):
        (got,) = scores(student, [(Q2, K2)], cast=dtype, to=device)
        expect_meta(
            got,
            dtype=dtype,
            device=device,
            what=f"scaled_scores(q, k {str(dtype)[6:]} on {device})",
            expected=oracle.expected("scaled_scores", Q2, K2),
        )


@check("keeps the input's precision (float64 in, float64 accuracy out)")
def test_precision(student):
    pairs = ((Q, K), (Q2, K2))
    for (q, k), got in zip(pairs, scores(student, pairs, cast=torch.float64)):
        expect_precise(
            got,
            oracle.expected("scaled_scores", q, k),
            what=f"scaled_scores(q {tuple(q.shape)}, k {tuple(k.shape)} float64)",
            mistakes=oracle.mistakes("scaled_scores", q, k),
        )
