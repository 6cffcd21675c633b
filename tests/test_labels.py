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
from autograder.graders import blockwise as bw
from autograder.graders import padding as pad
from autograder.graders.inputs import fixed

F64 = torch.float64


def _mha_identity_out_proj():
    w = {f"{n}.weight": fixed(6, 4, seed=i) for i, n in enumerate(("W_query", "W_key", "W_value"))}
    w["out_proj.weight"], w["out_proj.bias"] = torch.eye(6, dtype=F64), torch.zeros(6, dtype=F64)
    return "multi_head_attention", (fixed(2, 5, 4, seed=9), w, 3), {}, m.MISSING_OUT_PROJ


def _state(d_in=4, d_out=6):
    w = {f"{n}.weight": fixed(d_out, d_in, seed=20 + i) for i, n in enumerate(("W_query", "W_key", "W_value"))}
    w["out_proj.weight"], w["out_proj.bias"] = fixed(d_out, d_out, seed=24), fixed(d_out, seed=25)
    return w


QKV = (fixed(2, 5, 4, seed=11), fixed(2, 5, 4, seed=12), fixed(2, 5, 4, seed=13))
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
    # stage 9: a mask, a causal alignment or a source that makes no difference on this input
    "padding ignored where nothing is padded": (
        "masked_attention",
        (*QKV, torch.ones(2, 5, dtype=torch.bool)),
        {},
        pad.PAD_IGNORED,
    ),
    "causal aligned bottom-right where T_q == T_k": (
        "masked_attention",
        (*QKV, None, True),
        {},
        pad.CAUSAL_BOTTOM_RIGHT,
    ),
    "fully masked rows left NaN where every query has a key": (
        "masked_attention",
        (*QKV, torch.tensor([[True] * 5, [True, True, False, False, False]])),
        {},
        pad.NAN_ROWS,
    ),
    "keys from x where the context is x": ("cross_attention", (QKV[0], QKV[0], _state(), 3), {}, pad.KEYS_FROM_X),
    # the scale and score slips of stages 6 to 9, on inputs where they change nothing
    "scale by sqrt(d_out) / n_heads with one head": (
        "multi_head_attention",
        (fixed(2, 5, 4, seed=9), _state(), 1),
        {},
        m.SCALE_D_OUT_OVER_HEADS,
    ),
    "keys and queries swapped where the scores are symmetric (q == k)": (
        "causal_attention",
        (QKV[0], QKV[0], QKV[2]),
        {},
        m.QK_SWAPPED,
    ),
    "scores multiplied by sqrt(d_k) where d_k == 1": (
        "causal_attention",
        (fixed(2, 5, 1, seed=1), fixed(2, 5, 1, seed=2), fixed(2, 5, 3, seed=3)),
        {},
        m.SCALE_TIMES,
    ),
    "scores floor-divided with one step (T = 1)": (
        "masked_attention",
        (fixed(2, 1, 4, seed=1), fixed(2, 1, 4, seed=2), fixed(2, 1, 4, seed=3)),
        {},
        m.FLOOR_DIVIDED,
    ),
}
# stages 10 and 11 drop a known mistake from the candidates wherever it changes nothing (oracles.distinct): on
# these inputs the name is not even a candidate, while on the second input it is
DROPPED_NEAR_MISSES = {
    "last partial block dropped where the block size divides T": (
        "online_softmax",
        (fixed(3, 8, seed=14), 4),
        (fixed(3, 7, seed=14), 4),
        bw.REMAINDER_DROPPED,
    ),
    "block-local causal offsets with a single block": (
        "blockwise_attention",
        (*QKV, 5, True),
        (*QKV, 2, True),
        bw.LOCAL_CAUSAL_OFFSET,
    ),
    "causal offset ignored when the sequence comes in one chunk": (
        "kv_decode",
        (QKV[0], [5], _state(), 3),
        (QKV[0], [2, 3], _state(), 3),
        bw.CAUSAL_OFFSET_IGNORED,
    ),
    "cache not used when the sequence comes in one chunk": (
        "kv_decode",
        (QKV[0], [5], _state(), 3),
        (QKV[0], [2, 3], _state(), 3),
        bw.CACHE_NOT_USED,
    ),
}


@pytest.mark.parametrize("case", DROPPED_NEAR_MISSES, ids=list(DROPPED_NEAR_MISSES))
def test_a_mistake_that_changes_nothing_is_not_a_candidate(case):
    name, args, other, label = DROPPED_NEAR_MISSES[case]
    assert label in oracle.mistakes(name, *other), "the label must be a candidate where it changes the answer"
    known = oracle.mistakes(name, *args)
    assert label not in known
    expected = oracle.expected(name, *args)
    got = expected * (1 + 3e-4) + 3e-4
    with pytest.raises(CheckFailed) as failed:
        expect_close(got, expected, what=case, dtype=F64, mistakes=known)
    assert failed.value.mistake is None and "known mistake" not in str(failed.value)


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


@pytest.mark.parametrize(
    "code, message, expected",
    [
        # the causal buffer of stages 7, 8 and 11, not sliced to a shorter input
        (
            'scores = scores.masked_fill(~self.mask, float("-inf"))',
            "The size of tensor a (5) must match the size of tensor b (8) at non-singleton dimension 3",
            m.NOT_SLICED,
        ),
        # stage 9 has no buffer: a padding mask of the wrong shape is not "not sliced to T"
        (
            'scores = scores.masked_fill(~key_padding_mask, float("-inf"))',
            "The size of tensor a (6) must match the size of tensor b (3) at non-singleton dimension 2",
            None,
        ),
        ("x = x.view(-1, T, C)", "view size is not compatible with input tensor's size and stride", None),
        # .T on a batched tensor reverses every dim; on a module's own 2-D weight it is an ordinary transpose, and a
        # shape error there is not "x.T on batched input"
        ("scores = queries @ keys.T", "mat1 and mat2 shapes cannot be multiplied (10x3 and 5x3)", m.X_T),
        ("queries = x @ self.W_query.T", "mat1 and mat2 shapes cannot be multiplied (6x3 and 2x3)", None),
        ("y = x @ self.out_proj.weight.T", "mat1 and mat2 shapes cannot be multiplied (6x3 and 2x3)", None),
        # a -1e9 fill in a half-precision call: torch refuses the number, and the hint says why
        (
            "scores = scores.masked_fill(~mask, -1e9)",
            "value cannot be converted to type c10::Half without overflow",
            None,
        ),
    ],
)
def test_an_error_is_explained_by_a_mistake_only_where_it_can_be_made(code, message, expected):
    error = {"type": "RuntimeError", "message": message, "where": {"line": 1, "function": "forward", "code": code}}
    hint, mistake = m._explain_error(error)
    assert mistake == expected
    assert hint is not None
    if "view size" in message:
        assert "not contiguous" in hint  # true of an input that arrives non-contiguous, no transpose needed
    if "Half" in message:
        assert "float('-inf')" in hint


def test_the_graders_know_the_recorders_mark_of_torch_attention_code():
    from autograder.runtime import fused

    assert m.TORCH_CODE_MARK == fused.TORCH_CODE_MARK
    assert any(word in fused.TORCH_CODE_MARK for word in fused.WORDS)  # a forbidden op to the judge
