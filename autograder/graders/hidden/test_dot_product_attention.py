"""Stage 4, hidden checks: random shapes, dims and huge logits (seeded per result), every device."""

import torch

from autograder import oracle
from autograder.checks import (
    HALVES,
    check,
    compare,
    diagnose,
    expect_close,
    expect_half,
    expect_shape,
    fail,
    softmax_tolerance,
    tolerance,
)
from autograder.graders.inputs import randn, rounded
from autograder.sandbox.values import Call

STAGE = "dot_product_attention"
SOFTMAXES = ("softmax_naive", "softmax_stable")


def _random_case(rng: torch.Generator, kind: str) -> tuple[torch.Tensor, int]:
    """A random shape and dim. ``kind``: "inner" (a dim before the last one), "last" (the last dim, as -1 or as a
    positive index) or "any". Where the dim is chosen, it and the last dim have at least 2 entries: over one
    entry, or always over the last dim, a softmax that ignores ``dim`` or forgets keepdim would give the right
    values, and the same mistake would cost points for one student and not for another.

    The "inner" case (the check's first) is one where a sum without keepdim gives numbers of its own, so that this
    mistake is named for every student: a dim after the first (over dim 0, e.sum(dim) broadcasts back as if kept:
    right by coincidence), of a tensor of 3 or 4 dims, and the sizes before it such that the sums broadcast
    against x without error (the one just before it as large as dim's, any earlier one 1 or that size too); dim 0,
    matrices and sizes that do not broadcast are the "any" case's to draw."""
    if kind == "any":
        ndim = int(torch.randint(1, 5, (1,), generator=rng))
        shape = torch.randint(1, 7, (ndim,), generator=rng).tolist()
        dim = int(torch.randint(-ndim, ndim, (1,), generator=rng))
        return 3.0 * randn(rng, *shape), dim
    ndim = int(torch.randint(3 if kind == "inner" else 2, 5, (1,), generator=rng))
    shape = torch.randint(1, 7, (ndim,), generator=rng).tolist()
    negative = bool(torch.randint(0, 2, (1,), generator=rng))  # the dim written as a negative index
    if kind == "inner":
        at = int(torch.randint(1, ndim - 1, (1,), generator=rng))  # 1..ndim-2
        dim = at - (ndim if negative else 0)
    else:
        at, dim = ndim - 1, -1 if negative else ndim - 1
    for d in (dim, -1, -2):
        shape[d] = max(shape[d], int(torch.randint(2, 7, (1,), generator=rng)))
    if kind == "inner":
        # e.sum(dim) right-aligned against x: the size before dim meets dim's own, an earlier one the next one's
        for i in range(at):
            if i == at - 1 or shape[i] != 1:
                shape[i] = shape[at]
    return 3.0 * randn(rng, *shape), dim


@check("softmax: random shapes and dims", weight=2)
def test_softmax_random(student, rng):
    cases = []
    for kind in ("inner", "last", "any"):
        x, dim = _random_case(rng, kind)
        cases += [(name, x, dim) for name in SOFTMAXES]
    answers = student.call_all(Call(name, x, cast=torch.float64, dim=dim) for name, x, dim in cases)
    for (name, x, dim), got in zip(cases, answers):
        expect_close(
            got,
            oracle.expected(name, x, dim=dim),
            what=f"{name}(x {tuple(x.shape)}, dim={dim})",
            mistakes=oracle.mistakes(name, x, dim=dim),
        )


def _telling_mistakes(x: torch.Tensor, dim: int, dtype: torch.dtype) -> dict:
    """The known mistakes of ``softmax_stable(x, dim=dim)`` that can explain an answer on these logits: not those
    whose output here is the uniform distribution along ``dim`` at the check's tolerance. Logits of one sign near
    ±1e4 make a sum normalisation (x / x.sum(dim)) give 1/n everywhere, and so do many other wrong routes (a
    division by the maximum, logits scaled down): such a flat answer shows only that it is flat."""
    rtol, atol = softmax_tolerance(dtype, x)[0], tolerance(dtype)[1]
    flat = torch.full_like(x, 1.0 / x.shape[dim])
    return {
        name: wrong
        for name, wrong in oracle.mistakes("softmax_stable", x, dim=dim).items()
        if not (isinstance(wrong, torch.Tensor) and wrong.shape == x.shape and compare(wrong, flat, rtol, atol)[0])
    }


@check("softmax_stable: random logits near ±1e4")
def test_stable_large_random(student, rng):
    # each row sits near +1e4 or -1e4 (naive exp overflows to inf or underflows to 0 there), rows of both signs in a
    # random order (a max taken over the whole tensor underflows the rows near -1e4: with one sign only, for 1
    # student in 16, nothing did); the values are rounded to float32 first, so the float32 answer is judged on
    # exactly the numbers it received
    sign = torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0], dtype=torch.float64)
    sign[2:] = torch.where(torch.rand(3, generator=rng) < 0.5, -1.0, 1.0)
    sign = sign[torch.randperm(5, generator=rng)].unsqueeze(1)
    x = (1e4 * sign + 3.0 * randn(rng, 5, 6)).to(torch.float32).to(torch.float64)
    cases = ((torch.float32, -1), (torch.float64, -1), (torch.float32, 0))
    answers = student.call_all(Call("softmax_stable", x, cast=dtype, dim=dim) for dtype, dim in cases)
    for (dtype, dim), got in zip(cases, answers):
        got = expect_shape(got, x.shape, f"softmax_stable(x near ±1e4, dim={dim})")
        mistakes = _telling_mistakes(x, dim, dtype)
        if not bool(torch.isfinite(got.t).all()):
            mistake = diagnose(
                got.t,
                mistakes,
                *tolerance(got.asked or torch.float32),
                expected=oracle.expected("softmax_stable", x, dim=dim),
            )
            fail(
                f"softmax_stable(x near ±1e4, {str(dtype)[6:]}, dim={dim}) returned inf or NaN: subtract the "
                "maximum along dim before exp, and sum along that same dim"
                + (f"\n  this looks like a known mistake: {mistake}" if mistake else ""),
                mistake,
            )
        expect_close(
            got,
            oracle.expected("softmax_stable", x, dim=dim),
            what=f"softmax_stable(x near ±1e4, {str(dtype)[6:]}, dim={dim})",
            rtol=softmax_tolerance(dtype, x)[0],
            mistakes=mistakes,
        )


@check("attention: random shapes, leading dims, T = 1", weight=2)
def test_attention_random(student, rng):
    cases = []
    for shape in [(2, 6, 4), (2, 3, 5, 2), (3, 1, 7), (1, 5, 3)]:
        x = randn(rng, *shape)
        scores = 2.0 * randn(rng, *shape[:-1], shape[-2])
        cases += [("attention_scores", x), ("attention_weights", scores), ("context_vectors", x)]
    answers = student.call_all(Call(name, arg, cast=torch.float64) for name, arg in cases)
    for (name, arg), got in zip(cases, answers):
        expect_close(
            got,
            oracle.expected(name, arg),
            what=f"{name}(x {tuple(arg.shape)})",
            mistakes=oracle.mistakes(name, arg),
        )


@check("attention: non-contiguous input, every device")
def test_attention_noncontig(student, rng, device):
    x = randn(rng, 2, 3, 5, 4)
    scores = 2.0 * randn(rng, 2, 3, 5, 5)
    cases = (("attention_scores", x), ("attention_weights", scores), ("context_vectors", x))
    answers = student.call_all(Call(name, arg, cast=torch.float32, to=device, noncontig=True) for name, arg in cases)
    for (name, arg), got in zip(cases, answers):
        expect_close(
            got,
            oracle.expected(name, arg),
            what=f"{name}(x {tuple(arg.shape)} non-contiguous, {device})",
            mistakes=oracle.mistakes(name, arg),
        )


@check("float16 and bfloat16 (CPU)")
def test_half(student, rng):
    # scores, and their spread within a row, stay far below 11, where exp overflows float16: a softmax shifted by
    # the wrong amount (none, the row's minimum), which its own checks already cost, does not fail here too on some
    # students' draws only
    x, scores = 0.5 * randn(rng, 2, 5, 4), randn(rng, 2, 5, 5)
    cases = [
        (name, rounded(arg, dtype), dtype)
        for dtype in HALVES
        for name, arg in (("softmax_stable", scores), ("attention_weights", scores), ("context_vectors", x))
    ]
    answers = student.call_all(Call(name, xh, cast=dtype) for name, xh, dtype in cases)
    for (name, xh, dtype), got in zip(cases, answers):
        expect_half(
            got,
            oracle.expected(name, xh),
            dtype,
            what=f"{name}(x {tuple(xh.shape)} {str(dtype)[6:]})",
            mistakes=oracle.mistakes(name, xh),
        )
