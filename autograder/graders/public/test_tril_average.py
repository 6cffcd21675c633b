"""Stage 2, public checks: the running average as one matrix product."""

import torch

from autograder import oracle
from autograder.checks import (
    check,
    credited,
    expect_close,
    expect_kept,
    expect_meta,
    expect_precise,
    expect_shape,
    fail,
)
from autograder.graders.inputs import fixed
from autograder.sandbox.values import Call

STAGE = "tril_average"
X = fixed(2, 6, 3, seed=2)


@check("weights: shape (T, T) and values", weight=2)
def test_weights(student):
    lengths = (1, 4, 7)
    answers = student.call_all(Call("causal_mean_weights", T, dtype=torch.float64) for T in lengths)
    for T, got in zip(lengths, answers):
        got = expect_shape(
            got,
            (T, T),
            f"causal_mean_weights({T}, dtype=float64)",
        )
        expect_close(
            got,
            oracle.expected("causal_mean_weights", T),
            what=f"causal_mean_weights({T})",
            mistakes=oracle.mistakes("causal_mean_weights", T),
        )


@check("weights: rows sum to 1")
def test_rows_sum_to_one(student):
    got = expect_shape(student.call("causal_mean_weights", 6, dtype=torch.float64), (6, 6), "causal_mean_weights(6)")
    sums = {name: w.sum(-1) for name, w in oracle.mistakes("causal_mean_weights", 6).items()}
    expect_close(
        got.t.sum(-1), torch.ones(6, dtype=torch.float64), what="row sums of causal_mean_weights(6)", mistakes=sums
    )
    credited(
        got,
        oracle.expected("causal_mean_weights", 6),
        "causal_mean_weights(6)",
        oracle.mistakes("causal_mean_weights", 6),
    )


@check("weights: upper triangle exactly 0")
def test_upper_zero(student):
    got = expect_shape(student.call("causal_mean_weights", 5, dtype=torch.float32), (5, 5), "causal_mean_weights(5)")
    upper = torch.triu(got.t.to(torch.float64), diagonal=1)
    if bool((upper != 0).any()):
        r, c = (upper != 0).nonzero()[0].tolist()
        fail(
            f"causal_mean_weights(5)[{r}, {c}] = {float(upper[r, c]):.4g}, but step {r} must not see step {c} "
            "(the future): everything above the diagonal must be exactly 0",
            mistake="upper instead of lower triangle (torch.triu)" if bool(torch.tril(got.t, -1).eq(0).all()) else None,
        )
    credited(
        got,
        oracle.expected("causal_mean_weights", 5),
        "causal_mean_weights(5)",
        oracle.mistakes("causal_mean_weights", 5),
    )


@check("weights: dtype and device arguments are honoured, torch's defaults without them")
def test_weights_meta(student, device):
    dtypes = (torch.float32, torch.float64)
    calls = [Call("causal_mean_weights", 3, device=device, dtype=dtype) for dtype in dtypes]
    plain = device == "cpu"  # once: without the arguments, torch's default dtype on the CPU (as the stub says)
    answers = student.call_all(calls + [Call("causal_mean_weights", 3)] if plain else calls)
    for dtype, got in zip(dtypes, answers):
        expect_meta(
            got,
            dtype=dtype,
            device=device,
            what=f"causal_mean_weights(3, device={device!r}, dtype={str(dtype)[6:]})",
            expected=oracle.expected("causal_mean_weights", 3),
        )
    if plain:
        expect_meta(
            answers[len(dtypes)],
            dtype=torch.float32,
            device="cpu",
            what="causal_mean_weights(3) without device= and dtype= (torch's defaults: float32 on the CPU)",
            expected=oracle.expected("causal_mean_weights", 3),
        )


@check("matmul: equals the loop average (tril equivalence)", weight=2)
def test_matmul_values(student):
    got = student.call("causal_mean_matmul", X, cast=torch.float64)
    expect_close(
        got,
        oracle.expected("causal_mean_loop", X),
        what="causal_mean_matmul(x) vs causal_mean_loop(x)",
        mistakes=oracle.mistakes("causal_mean_matmul", X),
    )


LONG = 64  # more steps than a whole computation has operations: the bound on the count at every length
# the longest sequence: a loop over blocks of steps, its count padded flat at the shorter lengths, runs more than
# LONG operations here unless its blocks are large (at T = 64 alone, blocks of 8 steps stayed under the bound)
LONGEST = 256


@check("matmul: the number of tensor operations does not grow with T or B", weight=2)
def test_vectorised(student):
    counts = {}
    sizes = {4: 2, LONG: 5, LONGEST: 1}  # T -> B: a Python loop over the batch grows the count too
    for T, B in sizes.items():
        x = fixed(B, T, 3, seed=T)
        reply = student.call(
            "causal_mean_matmul",
            x,
            cast=torch.float32,
            full=True,
            record=lambda x: oracle.expected("causal_mean_loop", x),
        )
        expect_close(
            reply["value"], oracle.expected("causal_mean_loop", x), what=f"causal_mean_matmul(x ({B}, {T}, 3))"
        )
        record = reply.get("record") or {}
        counts[T] = record.get("n_ops")
        fused = [n for n in record.get("forbidden", []) if not n.startswith("unverifiable: ")]
        if fused:
            fail(
                f"causal_mean_matmul calls {', '.join(fused)} (a fused attention kernel), whose inner operations the "
                "autograder cannot count: build the (T, T) weights with tensor operations (torch.tril, one "
                "division) and apply them with one @"
            )
        if counts[T] is None:
            why = next(
                (n[len("unverifiable: ") :] for n in record.get("forbidden", []) if n.startswith("unverifiable: ")),
                "no graph of the call",
            )
            fail(
                f"the autograder could not verify which tensor operations causal_mean_matmul ran for T={T}: {why}. "
                "It traces your call and replays the operations, which must give your answer, also on other "
                "inputs; compute with torch operations only (no numpy, no .item(), no Python numbers taken out "
                "of tensors, no torch.vmap) and keep what the call reads from outside it small, so that "
                "vectorisation can be checked"
            )
    grows = max(counts[LONG], counts[LONGEST]) > counts[4]
    if grows or max(counts.values()) >= LONG:
        # equal counts are not enough: extra operations can keep a loop's count flat, but a loop over LONG steps
        # runs at least one operation per step, and the whole computation needs about ten
        ran = ", ".join(f"{counts[T]} for x ({B}, {T}, 3)" for T, B in sizes.items())
        fail(
            f"causal_mean_matmul ran these numbers of tensor operations: {ran}; "
            + ("the count grows with T or B: " if grows else f"{LONG} or more, at least one per time step: ")
            + "a Python loop over time or batch still runs, in causal_mean_matmul or in causal_mean_weights, which it "
            "calls. Build the (T, T) weights with tensor operations (torch.tril, one division) and apply them with "
            "one @.",
            mistake="Python loop instead of one matrix product",
        )


@check("matmul: input unchanged, dtype and device kept")
def test_matmul_meta(student, device):
    reply = student.call("causal_mean_matmul", X, cast=torch.float32, to=device, full=True, return_inputs=True)
    what = f"causal_mean_matmul(x float32 on {device})"
    expect_kept(reply, what, oracle.expected("causal_mean_loop", X), dtype=torch.float32, device=device)


@check("keeps the input's precision (float64 in, float64 accuracy out)")
def test_precision(student):
    answers = iter(
        student.call_all(
            [Call("causal_mean_weights", 7, dtype=torch.float64), Call("causal_mean_matmul", X, cast=torch.float64)]
        )
    )
    expect_precise(
        next(answers),
        oracle.expected("causal_mean_weights", 7),
        what="causal_mean_weights(7, dtype=float64)",
    )
    expect_precise(
        next(answers),
        oracle.expected("causal_mean_loop", X),
        what="causal_mean_matmul(x float64)",
    )
