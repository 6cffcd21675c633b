"""Stage 4, public checks: softmax by hand (naive and stable), then dot-product attention without parameters."""

import torch

from autograder import oracle
from autograder.checks import (
    check,
    credited,
    diagnose,
    error_line,
    expect_close,
    expect_meta,
    expect_precise,
    expect_shape,
    expect_unchanged,
    fail,
    softmax_tolerance,
    tolerance,
    uses_dot_T,
)
from autograder.graders.inputs import JOURNEY, JOURNEY_CONTEXT_ROW_2, fixed
from autograder.sandbox.errors import StudentCodeError
from autograder.sandbox.values import Call

STAGE = "dot_product_attention"
XT_BATCHED = "x.T on batched input (reverses every dim; use x.transpose(-2, -1))"

LOGITS = fixed(3, 4, 5, seed=40, low=-3.0, high=3.0)
# Integer logits (exact in float32): rows that overflow exp, rows that underflow it, and a tie at the top.
BIG = torch.tensor(
    [[1e4, -1e4, 0.0, 9998.0], [-1e4, -1e4 + 1, -1e4 + 3, -1e4], [5.0, 1e4, 1e4, -3.0]], dtype=torch.float64
)
CUBE = fixed(3, 3, 3, seed=41)  # B = T = C: x.T runs without an error here, and gives wrong numbers
X = fixed(2, 4, 3, seed=42)
X5 = fixed(2, 5, 3, seed=45)
X1 = fixed(1, 4, 3, seed=47)  # a batch of one: x.squeeze(0) would drop the batch dim
SCORES = fixed(2, 4, 4, seed=43, low=-3.0, high=3.0)
SCORES4 = fixed(2, 2, 3, 3, seed=44, low=-3.0, high=3.0)
SQUARE = fixed(4, 4, seed=46, low=-3.0, high=3.0)  # square: a sum without keepdim still broadcasts (wrongly)
SOFTMAX_CASES = [(SQUARE, {}), (LOGITS, {}), (LOGITS, {"dim": 0}), (LOGITS, {"dim": 1}), (LOGITS[0, 0], {"dim": 0})]


def _args(x, kw) -> str:
    return f"x {tuple(x.shape)}" + "".join(f", {k}={v}" for k, v in kw.items())


def call_each(student, calls: list[Call]):
    """The answers of ``calls`` (one round trip for all), in order, explaining the usual reason batched input
    crashes: x.T reverses every dim."""
    answers = iter(student.call_all(calls))
    for c in calls:
        try:
            yield next(answers)
        except StudentCodeError as exc:
            x = c.args[0]
            code = error_line(exc.error, getattr(student, "source", ""))
            if x.dim() > 2 and uses_dot_T(code):
                fail(
                    f"{c.target}(x {tuple(x.shape)}) failed on a batch of sequences: {exc}\n"
                    "On a tensor with more than two dims, x.T reverses all of them: (B, T, C) becomes (C, T, B). "
                    "Swap only the last two with x.transpose(-2, -1) (or x.mT).\n"
                    f"  this looks like a known mistake: {XT_BATCHED}",
                    XT_BATCHED,
                )
            raise


def _softmax_values(student, name: str) -> None:
    answers = student.call_all(Call(name, x, cast=torch.float64, **kw) for x, kw in SOFTMAX_CASES)
    for (x, kw), got in zip(SOFTMAX_CASES, answers):
        expect_close(
            got,
            oracle.expected(name, x, **kw),
            what=f"{name}({_args(x, kw)}) vs torch.softmax",
            mistakes=oracle.mistakes(name, x, **kw),
        )  # type: ignore[arg-type]  # autograder.checks: Mapping


def dtypes_on(device: str) -> tuple:
    """The dtypes to try on a device (MPS has no float64)."""
    return (torch.float32,) if device == "mps" else (torch.float32, torch.float64)


@check("softmax_naive: equals torch.softmax (dims 0, 1, -1)", weight=2)
def test_naive_values(student):
    _softmax_values(student, "softmax_naive")


@check("softmax_stable: equals torch.softmax (dims 0, 1, -1)", weight=2)
def test_stable_values(student):
    _softmax_values(student, "softmax_stable")


@check("softmax_stable: finite for logits of ±1e4", weight=2)
def test_stable_large(student):
    dims: tuple[dict, ...] = ({}, {"dim": 0})
    answers = student.call_all(Call("softmax_stable", BIG, cast=torch.float32, **kw) for kw in dims)
    for kw, got in zip(dims, answers):
        want, mistakes = oracle.expected("softmax_stable", BIG, **kw), oracle.mistakes("softmax_stable", BIG, **kw)
        got = expect_shape(
            got,
            BIG.shape,
            f"softmax_stable(logits of ±1e4{''.join(f', {k}={v}' for k, v in kw.items())})",
        )
        bad = ~torch.isfinite(got.t)
        if bool(bad.any()):
            where = tuple(bad.nonzero()[0].tolist())
            mistake = diagnose(got.t, mistakes, *tolerance(got.asked or torch.float32), expected=want)
            fail(
                f"softmax_stable(logits of ±1e4{''.join(f', {k}={v}' for k, v in kw.items())}) has "
                f"{int(bad.sum())} non-finite values (first at {where}: {float(got.t[where])}). exp(1e4) is inf "
                "and inf / inf is NaN; exp(-1e4) is 0 and 0 / 0 is NaN. Subtract the maximum along dim "
                "(amax(dim, keepdim=True)) before exp, and sum along that same dim: the largest exponent becomes "
                "exp(0) = 1, and no sum is 0 or inf."
                + (f"\n  this looks like a known mistake: {mistake}" if mistake else ""),
                mistake,
            )
        expect_close(
            got,
            want,
            what="softmax_stable(logits of ±1e4)",
            mistakes=mistakes,
            rtol=softmax_tolerance(torch.float32, BIG)[0],
        )


@check("softmax: sums to 1 along dim")
def test_softmax_sums(student):
    cases = (("softmax_naive", 1), ("softmax_stable", -1))
    answers = student.call_all(Call(name, LOGITS, cast=torch.float64, dim=dim) for name, dim in cases)
    for (name, dim), got in zip(cases, answers):
        got = expect_shape(got, LOGITS.shape, f"{name}(x (3, 4, 5), dim={dim})")
        sums = {m: v.sum(dim) for m, v in oracle.mistakes(name, LOGITS, dim=dim).items() if v.shape == LOGITS.shape}
        expect_close(
            got.t.sum(dim),
            torch.ones_like(LOGITS.sum(dim)),
            what=f"sums of {name}(x (3, 4, 5), dim={dim}) along dim {dim}",
            mistakes=sums,
        )
        credited(
            got,
            oracle.expected(name, LOGITS, dim=dim),
            f"{name}(x (3, 4, 5), dim={dim})",
            oracle.mistakes(name, LOGITS, dim=dim),
        )


@check("scores: x @ x^T over the last two dims", weight=2)
def test_scores(student):
    xs = (JOURNEY, CUBE, X, X1)
    for x, got in zip(xs, call_each(student, [Call("attention_scores", x, cast=torch.float64) for x in xs])):
        expect_close(
            got,
            oracle.expected("attention_scores", x),
            what=f"attention_scores(x {tuple(x.shape)})",
            mistakes=oracle.mistakes("attention_scores", x),
        )


@check("weights: softmax over the last dim")
def test_weights(student):
    scores = (SCORES, SCORES4)
    for s, got in zip(scores, student.call_all(Call("attention_weights", s, cast=torch.float64) for s in scores)):
        expect_close(
            got,
            oracle.expected("attention_weights", s),
            what=f"attention_weights(scores {tuple(s.shape)})",
            mistakes=oracle.mistakes("attention_weights", s),
        )


# whole numbers up to 10 in size (exact in float32): scores x_t . x_s of up to 300, where exp overflows float32
BIG_X = (X5 * 10).round()


@check("weights and context: rows sum to 1, finite for scores of a few hundred")
def test_weights_rows(student):
    big = SCORES * 100  # scores up to 300: exp overflows float32 past 88
    answers = iter(
        student.call_all(
            [
                Call("attention_weights", SCORES, cast=torch.float64),
                Call("attention_weights", big, cast=torch.float32),
                Call("context_vectors", BIG_X, cast=torch.float32),
            ]
        )
    )
    got = expect_shape(
        next(answers),
        SCORES.shape,
        "attention_weights(scores (2, 4, 4))",
    )
    sums = {m: v.sum(-1) for m, v in oracle.mistakes("attention_weights", SCORES).items() if v.shape == SCORES.shape}
    expect_close(
        got.t.sum(-1),
        torch.ones(2, 4, dtype=torch.float64),
        what="row sums (last dim) of attention_weights(scores (2, 4, 4))",
        mistakes=sums,
    )
    credited(
        got,
        oracle.expected("attention_weights", SCORES),
        "attention_weights(scores (2, 4, 4))",
        oracle.mistakes("attention_weights", SCORES),
    )
    _finite_and_right(
        next(answers),
        oracle.expected("attention_weights", big),
        "attention_weights(scores (2, 4, 4) of up to ±300, float32)",
        "exp of a score above 88 overflows float32, and inf / inf is NaN. Weights are a softmax of any scores: use "
        "softmax_stable (the row's maximum subtracted before exp)",
    )
    # the weights are stable, so context_vectors must be too: it is attention_weights(attention_scores(x)) @ x
    _finite_and_right(
        next(answers),
        oracle.expected("context_vectors", BIG_X),
        "context_vectors(x (2, 5, 3) of whole numbers up to 10, float32: scores up to 300)",
        "attention_weights is finite for such scores, so context_vectors does not use it. Write it as "
        "attention_weights(attention_scores(x)) @ x (the stable softmax), not with a softmax of its own",
    )


def _finite_and_right(got, expected: torch.Tensor, what: str, why: str) -> None:
    """``got`` has the shape of ``expected``, holds no NaN or inf (else a failure that says ``why``), and equals it."""
    got = expect_shape(got, expected.shape, what)
    if not bool(torch.isfinite(got.t).all()):
        fail(f"{what} holds NaN or inf: {why}")
    expect_close(got, expected, what=what)


@check("context: journey row 2 is [0.4419, 0.6515, 0.5683]", weight=2)
def test_journey(student):
    want, mistakes = oracle.expected("context_vectors", JOURNEY), oracle.mistakes("context_vectors", JOURNEY)
    got = expect_shape(
        student.call("context_vectors", JOURNEY, cast=torch.float32),
        JOURNEY.shape,
        "context_vectors(journey inputs (6, 3))",
    )
    expect_close(
        got.t[1],
        JOURNEY_CONTEXT_ROW_2,
        what="row 2 of context_vectors(journey inputs), the notebook's table",
        rtol=0.0,
        atol=1e-4,
        mistakes={m: v[1] for m, v in mistakes.items() if v.shape == JOURNEY.shape},
    )
    expect_close(got, want, what="context_vectors(journey inputs)", mistakes=mistakes)


@check("context: batched input (B, T, C), a batch of one")
def test_context_batched(student):
    xs = (X5, CUBE, X1)
    for x, got in zip(xs, call_each(student, [Call("context_vectors", x, cast=torch.float64) for x in xs])):
        expect_close(
            got,
            oracle.expected("context_vectors", x),
            what=f"context_vectors(x {tuple(x.shape)})",
            mistakes=oracle.mistakes("context_vectors", x),
        )


# one (T, C) sequence for the attention functions: these checks are about side effects and dtypes, not batching
CALLS = [
    ("softmax_naive", LOGITS, {"dim": 0}),
    ("softmax_stable", LOGITS, {"dim": 0}),
    ("attention_scores", JOURNEY, {}),
    ("attention_weights", SCORES[0], {}),
    ("context_vectors", JOURNEY, {}),
]


@check("inputs unchanged")
def test_inputs_unchanged(student):
    calls = [Call(name, x, cast=torch.float32, full=True, return_inputs=True, **kw) for name, x, kw in CALLS]
    for (name, x, kw), reply in zip(CALLS, call_each(student, calls)):
        expect_unchanged(
            reply,
            name,
            oracle.expected(name, x, **kw),
            oracle.mistakes(name, x, **kw),
        )


@check("dtype and device follow the input")
def test_dtype_device(student, device):
    cases = [(name, x, kw, dtype) for name, x, kw in CALLS for dtype in dtypes_on(device)]
    calls = [Call(name, x, cast=dtype, to=device, **kw) for name, x, kw, dtype in cases]
    for (name, x, kw, dtype), got in zip(cases, call_each(student, calls)):
        expect_meta(
            got,
            dtype=dtype,
            device=device,
            what=f"{name}(x {str(dtype)[6:]} on {device})",
            expected=oracle.expected(name, x, **kw),
        )


@check("keeps the input's precision (float64 in, float64 accuracy out)")
def test_precision(student):
    calls = [Call(name, x, cast=torch.float64, **kw) for name, x, kw in CALLS]
    for (name, x, kw), got in zip(CALLS, call_each(student, calls)):
        expect_precise(
            got, oracle.expected(name, x, **kw), what=f"{name}(x float64)", mistakes=oracle.mistakes(name, x, **kw)
        )
