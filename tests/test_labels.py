"""Labels that are true: a known mistake is named only when its output differs from the correct answer on the
check's input (beyond the tolerance) and matches the learner's answer at the scoring tolerance.

Each near-miss below is an input on which a known mistake gives the correct answer (so it cannot explain a wrong
one), with a learner answer that is wrong by a little: the name must not appear. The class report counts the
names the checks give (``CheckResult.mistake``), so it counts only these true labels."""

from __future__ import annotations

import pytest
import torch

from autograder import oracle
from autograder.checks import CheckFailed, diagnose, expect_close, tolerance
from autograder.graders import attention as m
from autograder.graders.inputs import fixed

F64 = torch.float64


def _mha_identity_out_proj():
    w = {f"{n}.weight": fixed(6, 4, seed=i) for i, n in enumerate(("W_query", "W_key", "W_value"))}
    w["out_proj.weight"], w["out_proj.bias"] = torch.eye(6, dtype=F64), torch.zeros(6, dtype=F64)
    return "multi_head_attention", (fixed(2, 5, 4, seed=9), w, 3), {}, m.MISSING_OUT_PROJ


NEAR_MISSES = {
    "scale by sqrt(hs_v) where hs == hs_v": (
        "causal_attention",
        (fixed(2, 5, 4, seed=1), fixed(2, 5, 4, seed=2), fixed(2, 5, 4, seed=3)),
        {},
        m.SCALE_HS_V,
    ),
    "scale by sqrt(T) where T == d_k": (
        "scaled_scores",
        (fixed(2, 4, 4, seed=4), fixed(2, 4, 4, seed=5)),
        {},
        "divided by sqrt(T) instead of sqrt(d_k)",
    ),
    "missing out_proj where out_proj is the identity": _mha_identity_out_proj(),
    "features interleaved across heads with head size 1": (
        "split_heads",
        (fixed(2, 5, 3, seed=6), 3),
        {},
        m.INTERLEAVED_HEADS,
    ),
    "dim argument ignored with dim=-1": (
        "softmax_stable",
        (fixed(3, 5, seed=7, low=-3, high=3),),
        {"dim": -1},
        "dim argument ignored (softmax always over the last dim)",
    ),
}


@pytest.mark.parametrize("case", NEAR_MISSES, ids=list(NEAR_MISSES))
def test_a_mistake_that_gives_the_right_answer_is_never_named(case):
    name, args, kwargs, label = NEAR_MISSES[case]
    expected = oracle.expected(name, *args, **kwargs)
    known = oracle.mistakes(name, *args, **kwargs)
    assert label in known and torch.allclose(known[label], expected), "the near-miss must be one on this input"
    got = expected * (1 + 3e-4) + 3e-4  # wrong by a little (another slip), close to the variant too
    rtol, atol = tolerance(F64)
    assert diagnose(got, known, rtol, atol, expected=expected) is None
    with pytest.raises(CheckFailed) as failed:
        expect_close(got, expected, what=case, dtype=F64, mistakes=known)
    assert failed.value.mistake is None and "known mistake" not in str(failed.value)


def test_a_mistake_that_explains_the_answer_is_named():
    q, k, v = fixed(2, 5, 4, seed=1), fixed(2, 5, 4, seed=2), fixed(2, 5, 3, seed=3)  # hs != hs_v
    known = oracle.mistakes("causal_attention", q, k, v)
    expected = oracle.expected("causal_attention", q, k, v)
    with pytest.raises(CheckFailed) as failed:
        expect_close(known[m.SCALE_HS_V], expected, what="causal_attention", dtype=F64, mistakes=known)
    assert failed.value.mistake == m.SCALE_HS_V
