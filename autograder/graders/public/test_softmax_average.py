"""Stage 3, public checks: the causal mask, softmax of masked zeros, and the running mean they give back."""

import torch

from autograder import oracle
from autograder.checks import (
    check,
    credited,
    diagnose,
    expect_close,
    expect_kept,
    expect_meta,
    expect_precise,
    expect_shape,
    fail,
    heatmaps,
    tolerance,
)
from autograder.graders.inputs import fixed
from autograder.sandbox.values import Call

STAGE = "softmax_average"
X = fixed(2, 6, 3, seed=3)


def _picture(mask: torch.Tensor) -> list[str]:
    return [" ".join("1" if bool(v) else "." for v in row) for row in mask.to(torch.bool)]


def _mask(student, T: int, **kw):
    return expect_shape(student.call("causal_mask", T, **kw), (T, T), f"causal_mask({T})")


def _right_mask(got, T: int) -> None:
    """A check of the mask's dtype or device counts only when its pattern is right."""
    credited(got.t.to(torch.bool), oracle.expected("causal_mask", T), f"causal_mask({T})")


def dtypes_on(device: str) -> tuple:
    """The dtypes to try on a device (MPS has no float64)."""
    return (torch.float32,) if device == "mps" else (torch.float32, torch.float64)


@check("mask: dtype is torch.bool")
def test_mask_dtype(student):
    got = _mask(student, 4)
    _right_mask(got, 4)
    if got.dtype != "bool":
        fail(
            f"causal_mask(4) returned dtype {got.dtype}; a mask should be torch.bool (True = may look). "
            "masked_fill and ~ expect booleans: ~ on a float tensor is an error, and on integers it is a bitwise "
            "not (~1 is -2, ~0 is -1), not False and True. Create it with dtype=torch.bool."
        )


@check("mask: True exactly where s <= t", weight=2)
def test_mask_pattern(student):
    lengths = (4, 7, 1)
    answers = student.call_all(Call("causal_mask", T) for T in lengths)
    for T, got in zip(lengths, answers):
        # the oracle is asked before the answer is looked at: a student release answers from values recorded
        # while grading the solutions, so every call a check can make must also happen for a correct answer
        want, known = oracle.expected("causal_mask", T), oracle.mistakes("causal_mask", T)
        got = expect_shape(got, (T, T), f"causal_mask({T})").t.to(torch.bool)
        if torch.equal(got, want):
            continue
        mistake = diagnose(
            got.to(torch.float64),
            {k: v.to(torch.float64) for k, v in known.items()},
            0,
            0,
            expected=want.to(torch.float64),
        )
        w = max(2 * T - 1, 8)
        lines = [
            f"causal_mask({T}) has the wrong pattern. Row t is the step that looks, column s the step "
            "looked at; True (1) where s <= t:",
            f"  {'expected':<{w}}   got",
        ]
        lines += [f"  {e:<{w}}   {g}" for e, g in zip(_picture(want), _picture(got))]
        if mistake:
            lines.append(f"  this looks like a known mistake: {mistake}")
        fail("\n".join(lines), mistake, heatmaps(want, got, f"causal_mask({T})"))


@check("mask: device argument honoured")
def test_mask_device(student, device):
    got = expect_meta(
        student.call("causal_mask", 3, device=device), device=device, what=f"causal_mask(3, device={device!r})"
    )
    _right_mask(expect_shape(got, (3, 3), "causal_mask(3)"), 3)


@check("weights: equal the stage 2 running-mean weights", weight=2)
def test_weights_values(student):
    lengths = (4, 7, 1)
    answers = student.call_all(Call("masked_uniform_weights", T, dtype=torch.float64) for T in lengths)
    for T, got in zip(lengths, answers):
        got = expect_shape(
            got,
            (T, T),
            f"masked_uniform_weights({T}, dtype=float64)",
        )
        expect_close(
            got,
            oracle.expected("causal_mean_weights", T),
            what=f"masked_uniform_weights({T}) vs causal_mean_weights({T})",
            mistakes=oracle.mistakes("masked_uniform_weights", T),
        )


@check("weights: no NaN")
def test_weights_no_nan(student):
    lengths = (6, 1)
    answers = student.call_all(Call("masked_uniform_weights", T, dtype=torch.float32) for T in lengths)
    for T, got in zip(lengths, answers):
        want, known = oracle.expected("causal_mean_weights", T), oracle.mistakes("masked_uniform_weights", T)
        got = expect_shape(got, (T, T), f"masked_uniform_weights({T})")
        bad = torch.isnan(got.t)
        if bool(bad.any()):
            row = int(bad.nonzero()[0][0])
            mistake = diagnose(got.t, known, *tolerance(got.asked or torch.float32), expected=want)
            fail(
                f"masked_uniform_weights({T}) has NaN in row {row}. A row whose scores are all -inf becomes "
                "0 / 0 = NaN after softmax, so -inf landed on steps that must stay visible: put it on the future "
                "only (s > t), never on the diagonal. (masked_fill writes where its mask is True: give it ~mask.)"
                + (f"\n  this looks like a known mistake: {mistake}" if mistake else ""),
                mistake,
                heatmaps(want, got, f"masked_uniform_weights({T})"),
            )
        credited(got, want, f"masked_uniform_weights({T})", known)


@check("weights: rows sum to 1")
def test_weights_rows(student):
    got = expect_shape(
        student.call("masked_uniform_weights", 6, dtype=torch.float64), (6, 6), "masked_uniform_weights(6)"
    )
    sums = {name: w.sum(-1) for name, w in oracle.mistakes("masked_uniform_weights", 6).items()}
    expect_close(
        got.t.sum(-1), torch.ones(6, dtype=torch.float64), what="row sums of masked_uniform_weights(6)", mistakes=sums
    )
    credited(
        got,
        oracle.expected("causal_mean_weights", 6),
        "masked_uniform_weights(6)",
        oracle.mistakes("masked_uniform_weights", 6),
    )


@check("weights: dtype and device arguments honoured, torch's defaults without them")
def test_weights_meta(student, device):
    dtypes = dtypes_on(device)
    calls = [Call("masked_uniform_weights", 3, device=device, dtype=dtype) for dtype in dtypes]
    plain = device == "cpu"  # once: without the arguments, torch's default dtype on the CPU (as the stub says)
    answers = student.call_all(calls + [Call("masked_uniform_weights", 3)] if plain else calls)
    for dtype, got in zip(dtypes, answers):
        expect_meta(
            got,
            dtype=dtype,
            device=device,
            what=f"masked_uniform_weights(3, device={device!r}, dtype={str(dtype)[6:]})",
            expected=oracle.expected("causal_mean_weights", 3),
        )
    if plain:
        expect_meta(
            answers[len(dtypes)],
            dtype=torch.float32,
            device="cpu",
            what="masked_uniform_weights(3) without device= and dtype= (torch's defaults: float32 on the CPU)",
            expected=oracle.expected("causal_mean_weights", 3),
        )


@check("average: equals the loop average (stages 1-3 agree)", weight=2)
def test_average_values(student):
    got = student.call("causal_mean_softmax", X, cast=torch.float64)
    expect_close(
        got,
        oracle.expected("causal_mean_loop", X),
        what="causal_mean_softmax(x) vs causal_mean_loop(x)",
        mistakes=oracle.mistakes("causal_mean_softmax", X),
    )


@check("average: input unchanged, dtype and device kept")
def test_average_meta(student, device):
    dtypes = dtypes_on(device)
    answers = student.call_all(
        Call("causal_mean_softmax", X, cast=dtype, to=device, full=True, return_inputs=True) for dtype in dtypes
    )
    for dtype, reply in zip(dtypes, answers):
        what = f"causal_mean_softmax(x {str(dtype)[6:]} on {device})"
        expect_kept(reply, what, oracle.expected("causal_mean_loop", X), dtype=dtype, device=device)


@check("keeps the input's precision (float64 in, float64 accuracy out)")
def test_precision(student):
    answers = iter(
        student.call_all(
            [Call("masked_uniform_weights", 7, dtype=torch.float64), Call("causal_mean_softmax", X, cast=torch.float64)]
        )
    )
    expect_precise(
        next(answers),
        oracle.expected("causal_mean_weights", 7),
        what="masked_uniform_weights(7, dtype=float64)",
    )
    expect_precise(
        next(answers),
        oracle.expected("causal_mean_loop", X),
        what="causal_mean_softmax(x float64)",
    )
