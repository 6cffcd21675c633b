"""Stage 5, hidden checks: random shapes, and the statistics the scale is for.

For unit-Gaussian q and k, a raw score q . k is a sum of d_k products of variance 1, so its variance is d_k;
divided by sqrt(d_k) it is 1 whatever d_k is. The checks draw many (q, k) pairs from the seeded generator and
compute the variance here, from the numbers the learner returned.

Why the band 0.8 .. 1.25 never fails a correct answer: with N scores, the sampling standard deviation of the
variance estimate is about sqrt((2 + 6 / d_k + 4 (T - 1) / d_k) / N) (scores that share a query or a key are
slightly correlated). PLANS keeps it under 0.018 for every d_k, so the band is more than 11 standard deviations
wide on each side; over 1000 seeds a correct answer's variance stayed within 0.94 .. 1.06 for every d_k.
Every wrong scale we know of lands outside it for at least one d_k: no scale gives d_k, / d_k gives 1 / d_k,
/ sqrt(T) gives d_k / T, / (d_k / 2) gives 4 / d_k, / d_k / 2 gives 1 / (4 d_k).
No plan has T = 2 d_k: there `/ d_k ** 1/2` (a division by 2 d_k) would look like a division by T.
"""

import functools
import math

import torch

from autograder import oracle
from autograder.checks import (
    HALVES,
    check,
    credited,
    diagnose,
    expect_close,
    expect_half,
    expect_shape,
    fail,
    tolerance,
)
from autograder.graders.inputs import randn, rounded
from autograder.sandbox.values import Call

STAGE = "variance_scaling"
# d_k -> (sequences, T): n * T * T scores from n * T * d_k numbers per tensor (at most 1 MB in float64)
PLANS = {4: (1024, 6), 16: (256, 8), 64: (64, 16), 256: (32, 16)}
LOW, HIGH = 0.8, 1.25


def _known(got, q, k) -> str | None:
    known = oracle.mistakes("scaled_scores", q, k)
    return diagnose(
        got.t, known, *tolerance(got.asked or torch.float32), expected=oracle.expected("scaled_scores", q, k)
    )


def _right_values(got, q, k) -> None:
    """The statistics count only for the right scores: random noise of the right shape has variance 1 too."""
    credited(
        got,
        oracle.expected("scaled_scores", q, k),
        f"scaled_scores(q, k {tuple(q.shape)})",
        oracle.mistakes("scaled_scores", q, k),
    )


def _suffix(mistake: str | None) -> str:
    return f"\n  this looks like a known mistake: {mistake}" if mistake else ""


@functools.lru_cache(maxsize=8)
def _gaussian_pairs(seed: int, d_k: int):
    """Unit-Gaussian q, k for one d_k; the same for both statistics checks of one result (drawn once)."""
    n, t = PLANS[d_k]
    rng = torch.Generator().manual_seed((seed * 1000003 + d_k) % (1 << 63))
    return randn(rng, n, t, d_k), randn(rng, n, t, d_k)


def _pair(rng, q_shape, k_shape):
    """Gaussian q of spread 0.5 (exact in float32, like ``randn``'s) and unit k for the value checks: their scores'
    own standard deviation is half of sqrt(d_k), so dividing the scores by it is never the right answer by chance
    (for unit q and k it came within float32 tolerance of sqrt(d_k) for about 1 draw in 500)."""
    return 0.5 * randn(rng, *q_shape), randn(rng, *k_shape)


def _shaped(got, q):
    n, t, _ = q.shape
    return expect_shape(got, (n, t, t), f"scaled_scores(q, k {tuple(q.shape)})")


def _scaled_samples(student, seed: int):
    """The learner's scaled scores of the Gaussian samples, one per d_k of ``PLANS``, in that order. Both
    statistics checks examine the same samples (:func:`_gaussian_pairs`), so they examine the same answers too:
    asked for once per result (about a megabyte each way), kept in the proxy's ``memo``. Answers with an error
    are not kept: the second check asks again."""
    memo = getattr(student, "memo", None)
    key = ("variance samples", seed)
    if isinstance(memo, dict) and key in memo:
        return memo[key]
    answers = student.call_all(Call("scaled_scores", *_gaussian_pairs(seed, d_k), cast=torch.float32) for d_k in PLANS)
    if isinstance(memo, dict) and answers.error is None:
        memo[key] = answers
    return answers


@functools.lru_cache(maxsize=8)
def _raw_variance(seed: int, d_k: int) -> float:
    """The variance of the unscaled scores q @ k^T of the sample (about d_k): a fact about the inputs."""
    return float(oracle.expected("unscaled_scores", *_gaussian_pairs(seed, d_k)).var())


@check("random inputs, varied shapes (T_q != T_k, T = 1)")
def test_random(student, rng):
    shapes = [
        ((3, 4, 6), (3, 9, 6)),
        ((1, 1, 2), (1, 1, 2)),
        ((2, 3, 5, 16), (2, 3, 5, 16)),
        ((7, 3), (2, 3)),
    ]
    pairs = [_pair(rng, q_shape, k_shape) for q_shape, k_shape in shapes]
    answers = student.call_all(Call("scaled_scores", q, k, cast=torch.float64) for q, k in pairs)
    for (q_shape, k_shape), (q, k), got in zip(shapes, pairs, answers):
        expect_close(
            got,
            oracle.expected("scaled_scores", q, k),
            what=f"scaled_scores(q {q_shape}, k {k_shape})",
            mistakes=oracle.mistakes("scaled_scores", q, k),
        )


@check("non-contiguous inputs, every device")
def test_noncontig_devices(student, rng, device):
    q, k = _pair(rng, (2, 3, 5, 8), (2, 3, 6, 8))
    expect_close(
        student.call("scaled_scores", q, k, cast=torch.float32, to=device, noncontig=True),
        oracle.expected("scaled_scores", q, k),
        what=f"scaled_scores(q (2, 3, 5, 8), k (2, 3, 6, 8) non-contiguous, {device})",
        mistakes=oracle.mistakes("scaled_scores", q, k),
    )


@check("variance ≈ 1 for unit-Gaussian q, k (d_k = 4 to 256)", weight=2)
def test_variance_is_one(student, seed):
    for d_k, got in zip(PLANS, _scaled_samples(student, seed)):
        q, k = _gaussian_pairs(seed, d_k)
        got = _shaped(got, q)
        var = float(got.t.to(torch.float64).var())
        if not LOW <= var <= HIGH:
            raw = _raw_variance(seed, d_k)
            mistake = _known(got, q, k)
            fail(
                f"for {got.t.numel()} scores of unit-Gaussian q and k with d_k = {d_k}, the variance of "
                f"scaled_scores is {var:.4g}; it should be about 1 (accepted {LOW} to {HIGH}). The raw scores "
                f"q @ k^T of these inputs have variance {raw:.4g} (about d_k, a sum of d_k products of variance 1), "
                f"and dividing by sqrt(d_k) = {math.sqrt(d_k):g} divides the variance by d_k." + _suffix(mistake),
                mistake,
            )
        _right_values(got, q, k)


@check("the scale divides the raw variance (≈ d_k) by d_k")
def test_variance_ratio(student, seed):
    for d_k, got in zip(PLANS, _scaled_samples(student, seed)):
        q, k = _gaussian_pairs(seed, d_k)
        got = _shaped(got, q)
        raw = _raw_variance(seed, d_k)
        ratio = raw / max(float(got.t.to(torch.float64).var()), 1e-300)
        if not 0.98 * d_k <= ratio <= 1.02 * d_k:
            mistake = _known(got, q, k)
            fail(
                f"with d_k = {d_k}, the raw scores q @ k^T have variance {raw:.4g} (about d_k) and yours "
                f"{raw / ratio:.4g}: your scaling divided the variance by {ratio:.4g}, but dividing the scores by "
                f"sqrt(d_k) divides their variance by d_k = {d_k}."
                + (
                    _suffix(mistake)
                    if mistake
                    else " Divide the scores by sqrt(d_k), with d_k = q.shape[-1], using "
                    "true division (/, not //) and a square root (math.sqrt, or ** 0.5 in brackets)."
                ),
                mistake,
            )
        _right_values(got, q, k)


def _entropy(scores: torch.Tensor) -> float:
    """Mean entropy (nats) of softmax over the last dim."""
    logp = torch.log_softmax(scores.to(torch.float64), dim=-1)
    return float(-(logp.exp() * logp).sum(-1).mean())


@check("softmax of scaled scores is less peaked (higher entropy)")
def test_entropy(student, rng):
    # q of spread 0.5, k of spread 1: the scores' own standard deviation (4) is half of sqrt(d_k), so dividing by
    # it is never the right scale (for unit q and k it is within float32 tolerance of sqrt(d_k) for 1 seed in 100)
    d_k, t = 64, 16
    q, k = 0.5 * randn(rng, 64, t, d_k), randn(rng, 64, t, d_k)
    got = expect_shape(
        student.call("scaled_scores", q, k, cast=torch.float32), (64, t, t), f"scaled_scores(q, k {tuple(q.shape)})"
    )
    h_raw, h_got = _entropy(oracle.expected("unscaled_scores", q, k)), _entropy(got.t)
    if not h_got > h_raw + 0.5:
        mistake = _known(got, q, k)
        h_right = _entropy(oracle.expected("scaled_scores", q, k))
        fail(
            f"for Gaussian q and k (standard deviations 0.5 and 1) with d_k = {d_k} and T = {t}, softmax of the raw "
            f"scores q @ k^T has a mean entropy of {h_raw:.3g} nats (peaked: a few keys take most of the weight), "
            f"and softmax of your scaled scores {h_got:.3g}. Scaling by 1/sqrt(d_k) should spread the weights out: "
            f"the right scale gives {h_right:.3g} here, out of at most log(T) = {math.log(t):.3g} (uniform weights)."
            + _suffix(mistake),
            mistake,
        )
    _right_values(got, q, k)


@check("float16 and bfloat16 (CPU)")
def test_half(student, rng):
    # scores whose spread is a quarter of sqrt(d_k) (q and k of standard deviation 0.5): dividing by the scores' own
    # standard deviation (about sqrt(d_k) for unit inputs) is never within bfloat16's 5 %, whatever the draw of
    # these 60 scores (at a spread of 0.75 sqrt(d_k) it was, for 1 draw in 150)
    q, k = 0.5 * randn(rng, 2, 5, 8), 0.5 * randn(rng, 2, 6, 8)
    cases = [(rounded(q, dtype), rounded(k, dtype), dtype) for dtype in HALVES]
    answers = student.call_all(Call("scaled_scores", qh, kh, cast=dtype) for qh, kh, dtype in cases)
    for (qh, kh, dtype), got in zip(cases, answers):
        expect_half(
            got,
            oracle.expected("scaled_scores", qh, kh),
            dtype,
            what=f"scaled_scores(q, k {str(dtype)[6:]})",
            mistakes=oracle.mistakes("scaled_scores", qh, kh),
        )
