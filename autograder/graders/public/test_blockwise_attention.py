"""Stage 10, public checks: the online softmax and blockwise attention.

Expected values: ``torch.softmax`` and ``F.scaled_dot_product_attention`` computed here, in the judge, on the CPU in
float64. How the answer was computed (the largest tensor created, the work done, the ops called) is read from the
judge's record of a recorded call: the graph the learner's call was traced into, replayed by the judge
(autograder/sandbox/evidence.py). Fixed inputs only (stored for student releases).
"""

import math

import torch
import torch.nn.functional as F

from autograder import oracle
from autograder.checks import (
    check,
    diagnose,
    expect_close,
    expect_kept,
    expect_precise,
    expect_shape,
    fail,
    softmax_tolerance,
    tolerance,
)
from autograder.graders import blockwise as b
from autograder.graders.attention import expect_close_by_hand, explained
from autograder.graders.inputs import fixed

STAGE = "blockwise_attention"
F64 = torch.float64

# logits whose row maximum grows from block to block (a ramp), so that every rescaling step matters
X = fixed(3, 10, seed=201, low=-2, high=2) + torch.linspace(0, 3, 10, dtype=F64)
# logits of +-1e4, and a row of only large negative ones (a running maximum started at 0 underflows there: 0 / 0)
BIG = torch.tensor(
    [
        [0.0, -1e4, 1e4, 0.0, 1e4, -1e4, 0.0],
        [-1e4, -1e4, 0.0, 1e4, -1e4, 1e4, 1e4],
        [-1e4, -1e4, -1e4 + 2, -1e4, -1e4 + 1, -1e4, -1e4],
    ],
    dtype=F64,
)


def qkv(shape_q, T_k, hs_v, first):
    *lead, T_q, hs = shape_q
    ramp = torch.linspace(0, 1.5, T_k, dtype=F64).unsqueeze(-1)  # later keys score higher: the maximum grows
    return (
        fixed(*lead, T_q, hs, seed=first, low=-1.5, high=1.5) + 0.5,
        fixed(*lead, T_k, hs, seed=first + 1, low=-1.5, high=1.5) + ramp,
        fixed(*lead, T_k, hs_v, seed=first + 2),
    )


# (q, k, v, block_size): T divisible by the block, T not divisible, T_q < T_k, T_q > T_k, leading dims, a block
# larger than T
CASES = [
    (*qkv((2, 6, 4), 6, 3, 211), 2),
    (*qkv((2, 7, 4), 7, 3, 214), 3),
    (*qkv((1, 5, 4), 9, 2, 217), 4),
    (*qkv((1, 9, 4), 5, 3, 220), 4),
    (*qkv((2, 2, 7, 3), 7, 3, 223), 2),
    (*qkv((1, 4, 2), 4, 2, 226), 8),
]


def sdpa(q, k, v, causal):
    return F.scaled_dot_product_attention(q.to(F64), k.to(F64), v.to(F64), is_causal=causal)


def shape_of(*ts):
    return ", ".join(str(tuple(t.shape)) for t in ts)


def reference(q, k, v, n, causal=False):
    return oracle.expected("blockwise_attention", q, k, v, n, causal)


def attention_call(student, q, k, v, n, causal, *, what, cast=F64, record=True):
    """A recorded call of blockwise_attention, its values checked (a forbidden fused kernel earns nothing)."""
    with explained(student, what):
        reply = student.call(
            "blockwise_attention", q, k, v, n, causal, cast=cast, full=True, record=record and reference
        )
    expect_close_by_hand(
        reply,
        sdpa(q, k, v, causal),
        what=what + ", compared with F.scaled_dot_product_attention",
        mistakes=oracle.mistakes("blockwise_attention", q, k, v, n, causal),
    )
    return reply


OVERFLOW = (
    "exp() of a logit of 1e4 overflows, and of -1e4 underflows to 0: start the running maximum at -inf, subtract it "
    "before exponentiating, and update it with every block; keep one maximum per row (amax(dim=-1, keepdim=True)), "
    "not one for the whole block: a row far below another row's maximum underflows to 0 / 0. The rescale factor is "
    "exp(old max - new max), at most 1: exp(new max - old max) overflows, and so does dividing by the factor"
)
# the same logits gave a finite answer without the mask: what differs is the hidden keys
ALL_HIDDEN = (
    "The same scores gave a finite answer with causal=False, so the NaN comes from the hidden keys. Where every key "
    "of a block is hidden from a query and its running maximum is still -inf, exp(-inf - (-inf)) is NaN: visit the "
    "key blocks from the first, skip those wholly in the future, and rescale only from a finite maximum. A query "
    "block must also visit the key block on its diagonal, which holds its own positions: skipping it leaves the "
    "first queries no key at all (0 / 0). And a running maximum started at 0 instead of -inf stays above a query "
    "whose visible scores are all -1e4: exp(-1e4 - 0) is 0, and 0 / 0 is NaN"
)


def expect_finite(got, expected, what, mistakes, why: str = OVERFLOW):
    """No NaN or inf where the reference has none; a known mistake named only when its output is the answer."""
    t = got.t if hasattr(got, "t") else got
    if not bool(torch.isfinite(t).all()):
        mistake = diagnose(t, mistakes, *tolerance(torch.float32), expected=expected)
        if mistake:  # the mistake says where the NaN comes from (a mask that hides a query's own key, say)
            fail(f"{what}: the result holds NaN or inf.\n  this looks like a known mistake: {mistake}", mistake)
        fail(f"{what}: the result holds NaN or inf. {why}")


# ───────────────────────────── online_softmax ─────────────────────────────


@check("online_softmax equals torch.softmax (block sizes 1, 3, 4, 10 and 16; a last block shorter)", weight=2)
def test_online_softmax_values(student):
    for n in (1, 3, 4, 10, 16):
        what = f"online_softmax(x {tuple(X.shape)}, block_size={n})"
        with explained(student, what):
            got = expect_shape(student.call("online_softmax", X, n, cast=F64), tuple(X.shape), what)
        expect_close(
            got,
            oracle.expected("online_softmax", X, n),
            what=what + ", compared with torch.softmax",
            mistakes=oracle.mistakes("online_softmax", X, n),
        )


@check("online_softmax stays finite and exact at logits of +-1e4 (float32)")
def test_online_softmax_stable(student):
    for n in (2, 3):
        what = f"online_softmax(x with logits of +-1e4, block_size={n}) in float32"
        with explained(student, what):
            got = expect_shape(student.call("online_softmax", BIG, n, cast=torch.float32), tuple(BIG.shape), what)
        expected, known = oracle.expected("online_softmax", BIG, n), oracle.mistakes("online_softmax", BIG, n)
        expect_finite(got, expected, what, known)
        rtol, atol = softmax_tolerance(torch.float32, BIG)  # a log-domain softmax is off by ulps of 1e4
        expect_close(got, expected, what=what, mistakes=known, rtol=rtol, atol=atol)


@check(
    "online_softmax reads the row block by block (its work grows with the number of blocks; no softmax or "
    "logsumexp over more than one block)"
)
def test_online_softmax_blockwise(student):
    x = fixed(2, 24, seed=202, low=-3, high=3)
    counts = {}
    for n in (24, 4):
        what = f"online_softmax(x (2, 24), block_size={n})"
        with explained(student, what):
            reply = student.call(
                "online_softmax", x, n, cast=F64, full=True, record=lambda x, n: oracle.expected("online_softmax", x, n)
            )
        expect_close_by_hand(
            reply, oracle.expected("online_softmax", x, n), what=what, mistakes=oracle.mistakes("online_softmax", x, n)
        )
        wide = b.softmax_ops(reply, n, what=what)
        if wide:
            width = max(wide.values())
            whole = width >= x.shape[-1]
            fail(
                f"{what} calls {', '.join(sorted(wide))} over "
                + ("the whole row" if whole else f"{width} entries, more than one block,")
                + " at once. Compute it yourself: a running maximum and a running sum of exp(x - maximum), one "
                "block at a time",
                b.SOFTMAX_CALLED if whole else None,
            )
        counts[n] = b.record_of(reply).get("n_ops")
    if counts[4] is None or counts[24] is None or counts[4] <= counts[24]:
        fail(
            f"online_softmax ran {counts[24]} tensor operations with one block and {counts[4]} with six: a "
            "computation that reads the row block by block does more steps when there are more blocks. Loop "
            "over x[..., start:start + block_size], updating the running maximum and sum with each block"
        )


# ───────────────────────────── blockwise_attention ─────────────────────────────


@check(
    "blockwise_attention equals scaled_dot_product_attention (T not divisible by the block, T_q != T_k, leading dims)",
    weight=3,
)
def test_values(student):
    for i, (q, k, v, n) in enumerate(CASES):
        attention_call(
            student,
            q,
            k,
            v,
            n,
            False,
            record=i == 1,
            what=f"blockwise_attention(q, k, v of shapes {shape_of(q, k, v)}, block_size={n})",
        )


@check("blockwise_attention(..., causal=True) equals scaled_dot_product_attention(is_causal=True)", weight=3)
def test_causal_values(student):
    for i, (q, k, v, n) in enumerate(CASES):
        attention_call(
            student,
            q,
            k,
            v,
            n,
            True,
            record=i == 1,
            what=f"blockwise_attention(q, k, v of shapes {shape_of(q, k, v)}, block_size={n}, causal=True)",
        )


@check("blockwise_attention stays finite and exact at scores of +-1e4 (float32, causal and not)")
def test_stable(student):
    # scores q.k / sqrt(4) of exactly +-1e4 or 0; the largest key of most rows comes in a later block
    q = torch.zeros(1, 6, 4, dtype=F64)
    q[0, :, 0] = torch.tensor([100.0, -100.0, 100.0, 100.0, -100.0, 100.0])
    k = torch.zeros(1, 6, 4, dtype=F64)
    k[0, :, 0] = torch.tensor([-200.0, 0.0, 200.0, -200.0, 200.0, 0.0])
    v = fixed(1, 6, 3, seed=230)
    for causal in (False, True):
        what = f"blockwise_attention(scores of +-1e4, block_size=2, causal={causal}) in float32"
        with explained(student, what):
            got = expect_shape(
                student.call("blockwise_attention", q, k, v, 2, causal, cast=torch.float32), (1, 6, 3), what
            )
        expected, known = sdpa(q, k, v, causal), oracle.mistakes("blockwise_attention", q, k, v, 2, causal)
        expect_finite(got, expected, what, known, ALL_HIDDEN if causal else OVERFLOW)  # causal=False was finite
        rtol, atol = softmax_tolerance(torch.float32, q @ k.transpose(-2, -1) / 2)  # scores of +-1e4
        expect_close(got, expected, what=what, mistakes=known, rtol=rtol, atol=atol)


@check(
    "blockwise_attention never creates a tensor larger than (T_q, block_size) per batch and head "
    "(T = 96, block_size = 32; and T_q = 16 or 1 < T_k = 96), nor keeps the scores of every key block at once "
    "(T_k = 384, block_size = 32)",
    weight=2,
)
def test_memory(student):
    # T_q == T_k: the whole (T, T) scores are caught. T_q < block_size < T_k: blocks of queries alone, each
    # compared with every key at once, are caught too (with T_q == T_k their (block_size, T_k) scores have the
    # size of (T_q, block_size)); the keys and values, (T_k, 4) per head, still fit under the bound. One query:
    # a row of scores over every key, (1, T_k), is three times the bound, so queries taken one row at a time with
    # a whole-row softmax are caught; there only what depends on queries and keys counts (scores, weights), since
    # a copy of the keys, (T_k, hs), would exceed (1, block_size) too
    cases = (((1, 2), 96, 96, 8, 32, 240, False), ((2,), 16, 96, 4, 32, 244, False), ((2,), 1, 96, 4, 32, 246, True))
    for lead, T_q, T_k, hs, n, seed, scores_only in cases:
        q, k, v = qkv((*lead, T_q, hs), T_k, hs, seed)
        for causal in (False, True):
            what = f"blockwise_attention(q, k, v of shapes {shape_of(q, k, v)}, block_size={n}, causal={causal})"
            reply = attention_call(student, q, k, v, n, causal, what=what)
            heads = math.prod(lead)
            b.expect_largest(
                reply,
                heads * T_q * n,
                None if T_q == 1 else heads * T_q * T_k,  # one query: a whole row, or all the scores?
                what=what,
                allowed=f"{heads} heads x T_q {T_q} x block_size {n}",
                scores_only=scores_only,
            )
    # 12 key blocks of 32: one pass keeps about two blocks of scores alive (with the accumulators and the output, at
    # most 3.2 blocks' worth for every style graded so far); a split over the key blocks combined at the end keeps
    # each block's partial output and statistics, hs_v + 3 numbers per query and block; keeping every block's
    # scores for a second pass keeps block_size numbers per query and block, all 12 blocks' worth
    T_q, T_k, hs, n, heads = 16, 384, 4, 32, 2
    q, k, v = qkv((heads, T_q, hs), T_k, hs, 247)
    what = f"blockwise_attention(q, k, v of shapes {shape_of(q, k, v)}, block_size={n})"
    reply = attention_call(student, q, k, v, n, False, what=what)
    b.expect_peak(
        reply,
        heads * T_q * (4 * n + (T_k // n) * (hs + 4)),
        what=what,
        allowed=f"four blocks of (T_q {T_q}, block_size {n}) scores in {heads} heads, and {hs + 4} numbers per query "
        f"for each of the {T_k // n} key blocks",
    )


@check("blockwise_attention(causal=True) skips the key blocks wholly in the future (about half the work)", weight=2)
def test_causal_skips(student):
    # 4 x 4 block pairs, 10 of them needed when causal; with 32 features the masks of the diagonal blocks add
    # little: code that skips does about 73 % of the non-causal work, code that does not skip 100 % or more (107 %
    # for the catalogue's). Each block pair is traced and replayed: four blocks grade in about 60 % of five's time
    T, n = 32, 8
    q, k, v = qkv((1, T, 32), T, 32, 250)
    work = {}
    for causal in (False, True):
        what = f"blockwise_attention(q, k, v of shape (1, {T}, 32), block_size={n}, causal={causal})"
        work[causal] = b.record_of(attention_call(student, q, k, v, n, causal, what=what)).get("elements")
    if work[True] is None or work[False] is None:
        fail(
            "blockwise_attention: the autograder could not measure the work your code does (its computation could "
            "not be traced and verified)"
        )
    ratio = work[True] / max(work[False], 1)
    if ratio > 0.85:
        fail(
            f"blockwise_attention with causal=True created {work[True]} tensor elements, {ratio:.0%} of the "
            f"{work[False]} it creates without the mask: with {T // n} blocks of queries, query block i needs key "
            "blocks 0..i only, and skipping the others halves the work. A key block that starts after the last "
            "query of the current block can be skipped; masking it costs as much as computing it.",
            b.CAUSAL_NOT_SKIPPED,
        )


@check("blockwise_attention computes each score once (one pass over the key blocks, not a second that recomputes them)")
def test_one_pass(student):
    # the multiplications the replayed graph does (evidence.measure's "products": a matrix product's multiply-adds,
    # an elementwise product's elements), in units of T_q x T_k x hs: the scores take one, weights @ v one more
    # (hs_v = hs), and the elementwise work on the scores (the scale, the rescaling) about 0.1 with 32 features.
    # Every style graded so far does 2.0 to 2.2; a second pass that computes the scores again (the row maximum
    # first, then exp, the sum and @ v against it) does 3
    T, hs, n = 32, 32, 8
    q, k, v = qkv((1, T, hs), T, hs, 252)
    what = f"blockwise_attention(q, k, v of shape (1, {T}, {hs}), block_size={n})"
    products = b.record_of(attention_call(student, q, k, v, n, False, what=what)).get("products")
    if not isinstance(products, int):
        fail(
            f"{what}: the autograder could not measure the work your code does (its computation could not be traced "
            "and verified)"
        )
    unit = T * T * hs
    if products > 2.5 * unit:
        fail(
            f"{what} did {products} multiplications, {products / unit:.1f} x T_q x T_k x hs: one pass does about 2 "
            "(each score q.k once, then weights @ v). Computing the scores of every key block again, in a second "
            "pass after the row maximum is known, does the work twice: keep a running maximum instead, and rescale "
            "the running sum and the accumulator by exp(old max - new max) when it grows"
        )


@check("online_softmax and blockwise_attention: inputs unchanged, non-contiguous inputs, dtype and device kept")
def test_meta(student, device):
    what = f"online_softmax(x non-contiguous float32 on {device}, block_size=3)"
    with explained(student, what):
        reply = student.call(
            "online_softmax", X, 3, to=device, cast=torch.float32, noncontig=True, full=True, return_inputs=True
        )
    known = oracle.mistakes("online_softmax", X, 3)
    expect_kept(
        reply,
        what,
        oracle.expected("online_softmax", X, 3),
        shape=tuple(X.shape),
        dtype=torch.float32,
        device=device,
        mistakes=known,
    )
    q, k, v, n = CASES[1]
    for causal in (False, True):
        what = f"blockwise_attention(q, k, v non-contiguous float32 on {device}, block_size={n}, causal={causal})"
        with explained(student, what):
            reply = student.call(
                "blockwise_attention",
                q,
                k,
                v,
                n,
                causal,
                to=device,
                cast=torch.float32,
                noncontig=True,
                full=True,
                return_inputs=True,
            )
        expected, known = sdpa(q, k, v, causal), oracle.mistakes("blockwise_attention", q, k, v, n, causal)
        expect_kept(reply, what, expected, shape=(2, 7, 3), dtype=torch.float32, device=device, mistakes=known)


@check("keeps the input's precision (float64 in, float64 accuracy out)")
def test_precision(student):
    what = f"online_softmax(x {tuple(X.shape)} float64, block_size=3)"
    with explained(student, what):
        got = student.call("online_softmax", X, 3, cast=F64)
    expect_precise(
        got, oracle.expected("online_softmax", X, 3), what=what, mistakes=oracle.mistakes("online_softmax", X, 3)
    )
    q, k, v, n = CASES[1]
    what = f"blockwise_attention(q, k, v float64 of shapes {shape_of(q, k, v)}, block_size={n}, causal=True)"
    with explained(student, what):
        got = student.call("blockwise_attention", q, k, v, n, True, cast=F64)
    expect_precise(
        got, sdpa(q, k, v, True), what=what, mistakes=oracle.mistakes("blockwise_attention", q, k, v, n, True)
    )
