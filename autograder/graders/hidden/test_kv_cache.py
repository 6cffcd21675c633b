"""Stage 11, hidden checks: random sizes, weights and chunk schedules (seeded per result)."""

import torch

from autograder import oracle
from autograder.checks import HALVES, check, expect_close, expect_half
from autograder.graders.attention import biased, random_linear_weights
from autograder.graders.inputs import randn, rounded, rand_int, rand_int_except
from autograder.graders.public.test_kv_cache import decode, layers, module, roomy_cache

STAGE = "kv_cache"
F64 = torch.float64


@check("decoding with random sizes, weights and chunk schedules gives the rows of the full forward", weight=2)
def test_random_decoding(student, rng):
    for bias in (False, True):
        nh = rand_int(rng, 2, 3)  # several heads for every seed: with one, a split or merge mistake cannot show
        d_out, L = nh * rand_int(rng, 2, 3), 10  # head size >= 2: scales differ
        # nor d_in // nh == the head size (a head size taken from d_in would be right by coincidence)
        d_in = rand_int_except(rng, 2, 6, {d for d in range(2, 7) if d // nh == d_out // nh})
        w = random_linear_weights(rng, layers(d_in, d_out), bias=biased(bias))
        handle, w = module(student, d_in=d_in, d_out=d_out, nh=nh, L=L, bias=bias, weights=w, hint="")
        # a prompt of 2 to 4 positions, then chunks of 1 or 2: every chunk after the first has an offset. The first
        # case, which every mask mistake fails, has a prompt of 3 or 4: in chunks of at most two positions, mask
        # rows one step late hide nothing (the numbers of no mask among the new tokens, or of its rows read after
        # the append), and neither mistake was named for the students whose prompt was 2
        chunks = [rand_int(rng, 2 if bias else 3, 4)]
        while sum(chunks) < L:
            chunks.append(min(rand_int(rng, 1, 2), L - sum(chunks)))
        x = randn(rng, 2, L, d_in)
        what = f"decoding x {tuple(x.shape)} in chunks {', '.join(map(str, chunks))}"
        expected = oracle.expected("kv_decode", x, tuple(chunks), w, nh)
        mistakes = oracle.mistakes("kv_decode", x, tuple(chunks), w, nh)
        got = decode(
            student, handle, x, chunks, roomy_cache(student, L), what, d_out=d_out, reference=(expected, mistakes)
        )
        expect_close(got, expected, what=what + ", compared with the full causal forward", mistakes=mistakes)


@check("float16 and bfloat16 (CPU): decoding with a cache keeps the dtype and gives the rows of the full forward")
def test_half(student, rng):
    # head size 3, whose square root is none of the wrong scales' (sqrt(d_in // nh), sqrt(d_in), sqrt(nh), sqrt(d_out)):
    # a random head size of 2 or 3 let a scale mistake pass this check for some students' seeds and fail for others
    nh, d_in, L, d_out = 2, 4, 8, 6
    w = random_linear_weights(rng, layers(d_in, d_out), bias=biased(True))
    x = randn(rng, 2, L, d_in)
    # a prompt of 4: mask rows one step late hide positions 2 and 3 from the first query and 3 from the second
    # (no mask hides none). With a prompt of 3 they differed only by the first query's weight on position 2, within
    # float16's tolerance for some students' weights (about 1 in 400), and neither mistake was named there. L = 8,
    # twice the prompt: the mask rows of the prompt read after the append (4..7) are still rows of the mask
    chunks = (4, 1, 2, 1)
    for dtype in HALVES:
        name = str(dtype)[6:]
        handle, w = module(student, d_in=d_in, d_out=d_out, nh=nh, L=L, bias=True, weights=w, dtype=dtype, hint="")
        wh, xh = {n: rounded(t, dtype) for n, t in w.items()}, rounded(x, dtype)
        what = f"decoding x {tuple(x.shape)} {name} in chunks {', '.join(map(str, chunks))}"
        expected = oracle.expected("kv_decode", xh, chunks, wh, nh)
        # known mistakes are named at float16's tolerance only (see expect_half)
        mistakes = oracle.mistakes("kv_decode", xh, chunks, wh, nh) if dtype == torch.float16 else None
        reference = (expected, mistakes)
        got = decode(
            student, handle, xh, chunks, roomy_cache(student, L), what, d_out=d_out, cast=dtype, reference=reference
        )
        expect_half(got, expected, dtype, what=what, mistakes=mistakes)
