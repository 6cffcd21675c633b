"""Stage 10, hidden checks: random shapes, block sizes and logits (seeded per result), every device.

Every draw has a last block shorter than the others and at least two blocks, so that a dropped remainder or a
missing rescaling shows whatever the seed."""

import torch

from autograder import oracle
from autograder.checks import HALVES, check, expect_close, expect_half, expect_shape
from autograder.graders.attention import explained
from autograder.graders.inputs import randn, rounded, rand_int, rand_int_except, square_roots
from autograder.graders.public.test_blockwise_attention import attention_call, sdpa, shape_of

STAGE = "blockwise_attention"
F64 = torch.float64


def _ragged(rng, n):
    """A length of 2 to 4 whole blocks of ``n`` plus a shorter last block."""
    return n * rand_int(rng, 2, 4) + rand_int(rng, 1, n - 1)


@check("online_softmax on random shapes, block sizes and logit scales")
def test_random_online_softmax(student, rng):
    for _ in range(3):
        n = rand_int(rng, 2, 5)
        x = randn(rng, rand_int(rng, 1, 3), rand_int(rng, 1, 3), _ragged(rng, n)) * rand_int(rng, 1, 20)
        x = x + torch.linspace(0, 4, x.shape[-1], dtype=F64)  # the row maximum grows from block to block
        what = f"online_softmax(x {tuple(x.shape)}, block_size={n})"
        with explained(student, what):
            got = expect_shape(student.call("online_softmax", x, n, cast=F64), tuple(x.shape), what)
        expect_close(
            got,
            oracle.expected("online_softmax", x, n),
            what=what + ", compared with torch.softmax",
            mistakes=oracle.mistakes("online_softmax", x, n),
        )


@check("blockwise_attention on random shapes and block sizes, causal and not", weight=2)
def test_random_attention(student, rng):
    for i, causal in enumerate((False, True, True)):
        # the causal cases end on a block of one position, then on one of two or more (a mistake on the last,
        # diagonal, block shows in one of them whatever the draw); the last case has more queries than keys by
        # whole blocks (its last query blocks see every key block)
        n = rand_int(rng, 2, 4) if i < 2 else rand_int(rng, 3, 4)
        T_k = _ragged(rng, n) if i == 0 else n * rand_int(rng, 2, 4) + (1 if i == 1 else rand_int(rng, 2, n - 1))
        T_q = T_k if i < 2 else T_k + n * rand_int(rng, 1, 2)
        lead = (rand_int(rng, 1, 2), rand_int(rng, 1, 3))
        # hs >= 2 (a scale of sqrt(1) is no scale), never the block size (a scale of sqrt(block_size) would be
        # right on that draw). The first case fails first for every wrong scale, and tells them apart for every
        # student: 1, sqrt(hs), hs (no square root), sqrt(hs_v), sqrt(T_k) and sqrt(block_size) all differ there
        # (hs_v >= 2; n, hs, hs_v and T_k differ; none of n, T_k and hs_v is hs squared). Later cases may draw
        # hs_v = 1 or hs_v = hs
        if i == 0:
            hs = rand_int_except(rng, 2, 6, {n, T_k} | square_roots(n, T_k))
            hs_v = rand_int_except(rng, 2, 6, {n, T_k, hs, hs * hs})
        else:
            hs, hs_v = rand_int(rng, 2, 6), rand_int(rng, 1, 6)
            hs += hs == n
        q, k, v = randn(rng, *lead, T_q, hs), randn(rng, *lead, T_k, hs) * 2, randn(rng, *lead, T_k, hs_v)
        attention_call(
            student,
            q,
            k,
            v,
            n,
            causal,
            record=i == 0,
            what=f"blockwise_attention(q, k, v of shapes {shape_of(q, k, v)}, block_size={n}, causal={causal})",
        )


@check("blockwise_attention: non-contiguous float32 inputs, every device")
def test_devices(student, rng, device):
    n = rand_int(rng, 3, 5)
    # a last block of one position, and one of two or more: a causal mistake on the last (diagonal) block shows
    # in one of the two, whatever the draw
    for T in (n * rand_int(rng, 2, 3) + 1, n * rand_int(rng, 2, 3) + rand_int(rng, 2, n - 1)):
        # hs 6, hs_v 2: 1, sqrt(6), 6, sqrt(2), sqrt(T) (T >= 7) and sqrt(block_size) (3 to 5) all differ, so a
        # wrong scale is wrong and told apart from the others on every draw (hs_v 3 was the block size 3's)
        q, k, v = randn(rng, 2, T, 6), randn(rng, 2, T, 6), randn(rng, 2, T, 2)
        for causal in (False, True):
            what = (
                f"blockwise_attention(q, k, v (2, {T}, .) non-contiguous float32 on {device}, block_size={n}, "
                f"causal={causal})"
            )
            with explained(student, what):
                got = student.call(
                    "blockwise_attention", q, k, v, n, causal, to=device, cast=torch.float32, noncontig=True
                )
            expect_close(
                got,
                sdpa(q, k, v, causal),
                what=what,
                mistakes=oracle.mistakes("blockwise_attention", q, k, v, n, causal),
            )


@check("float16 and bfloat16 (CPU): online_softmax and blockwise_attention keep the dtype and stay finite")
def test_half(student, rng):
    n = rand_int(rng, 3, 4)
    N = _ragged(rng, n)
    # the row maximum grows from block to block, but no score exceeds an earlier block's maximum by anything near
    # 11, where exp overflows float16: a running maximum that is never updated, which the float32 checks already
    # cost, does not fail here too on some students' draws only
    x = randn(rng, 2, N) + torch.linspace(0, 4, N, dtype=F64)
    T = n * rand_int(rng, 2, 4) + rand_int(rng, 2, n - 1)  # a last (diagonal) block of two or more positions
    # hs 6, hs_v 2: 1, sqrt(6), 6, sqrt(2), sqrt(T) (T >= 8) and sqrt(block_size) (3 or 4) all differ, so a wrong
    # scale is wrong and told apart from the others on every draw (hs_v 3 was the block size 3's)
    q, k, v = randn(rng, 2, T, 6) * 0.5, randn(rng, 2, T, 6), randn(rng, 2, T, 2)
    for dtype in HALVES:
        name = str(dtype)[6:]
        xh = rounded(x, dtype)
        what = f"online_softmax(x {tuple(x.shape)} {name}, block_size={n})"
        with explained(student, what):
            got = student.call("online_softmax", xh, n, cast=dtype)
        expect_half(
            got,
            oracle.expected("online_softmax", xh, n),
            dtype,
            what=what,
            mistakes=oracle.mistakes("online_softmax", xh, n),
        )
        qh, kh, vh = (rounded(z, dtype) for z in (q, k, v))
        what = f"blockwise_attention(q, k, v {name} of shapes {shape_of(q, k, v)}, block_size={n}, causal=True)"
        with explained(student, what):
            got = student.call("blockwise_attention", qh, kh, vh, n, True, cast=dtype)
        expect_half(
            got,
            sdpa(qh, kh, vh, True),
            dtype,
            what=what,
            mistakes=oracle.mistakes("blockwise_attention", qh, kh, vh, n, True),
        )
