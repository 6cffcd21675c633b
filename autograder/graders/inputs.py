"""Fixed public inputs shared by the graders (the seed notebooks' tables among them)."""

import math

import torch

# "Your journey starts with one step": six tokens, three-dimensional embeddings (the seed notebook's table).
JOURNEY = torch.tensor(
    [
        [0.43, 0.15, 0.89],
        [0.55, 0.87, 0.66],
        [0.57, 0.85, 0.64],
        [0.22, 0.58, 0.33],
        [0.77, 0.25, 0.10],
        [0.05, 0.80, 0.55],
    ],
    dtype=torch.float64,
)
JOURNEY_CONTEXT_ROW_2 = torch.tensor([0.4419, 0.6515, 0.5683], dtype=torch.float64)
JOURNEY_QKV_ROW_2 = torch.tensor([0.3061, 0.8210], dtype=torch.float64)  # manual_seed(123), SelfAttentionParams(3, 2)


def fixed(*shape, seed: int = 0, low: float = -1.0, high: float = 1.0) -> torch.Tensor:
    """A deterministic float64 tensor (the same on every machine)."""
    g = torch.Generator().manual_seed(seed)
    return low + (high - low) * torch.rand(*shape, generator=g, dtype=torch.float64)


def randn(rng: torch.Generator, *shape) -> torch.Tensor:
    """Unit-Gaussian float64 values that are all exactly representable in float32: a learner graded in float32
    receives exactly the numbers the float64 reference uses. (Drawn in float32 and widened: torch's float32
    sampler is vectorised, its float64 one is about five times slower, a measurable share of grading time.)"""
    return torch.randn(*shape, generator=rng, dtype=torch.float32).to(torch.float64)


def rand_int(rng: torch.Generator, lo: int, hi: int) -> int:
    """A random integer from lo to hi (both included), drawn from ``rng``."""
    return int(torch.randint(lo, hi + 1, (1,), generator=rng))


def rand_int_except(rng: torch.Generator, lo: int, hi: int, avoid) -> int:
    """A random integer from lo to hi that is none of ``avoid`` (sizes kept apart, so that a mistake using the
    wrong one of them cannot be right by coincidence for some students' seeds)."""
    choices = [n for n in range(lo, hi + 1) if n not in avoid]
    return choices[rand_int(rng, 0, len(choices) - 1)]


def square_roots(*values: int) -> set[int]:
    """The whole numbers whose squares are among ``values``: sizes to keep out of a head-size draw, where a scale
    by hs (no square root) would equal a scale by the square root of one of ``values``."""
    return {r for v in values if v >= 0 and (r := math.isqrt(v)) * r == v}


def rand_head_size(rng: torch.Generator, n_heads: int, lo: int, hi: int) -> int:
    """A random head size from lo to hi for ``n_heads`` heads (more than one) at which the scale mistakes of a
    multi-head attention give numbers of their own: not n_heads (sqrt(d_out) / n_heads would be 1, no scale's),
    not n_heads ** 2 (sqrt(d_out) / n_heads would be sqrt(n_heads)) and not sqrt(n_heads) (sqrt(d_out) / n_heads
    would be 1 / sqrt(head_size), a multiplication by sqrt(head_size)). With one head it is any of lo..hi."""
    if n_heads == 1:
        return rand_int(rng, lo, hi)
    return rand_int_except(
        rng, lo, hi, {n_heads, n_heads * n_heads} | {h for h in range(lo, hi + 1) if h * h == n_heads}
    )


def rounded(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``x`` rounded to ``dtype`` and widened back to float64: the numbers a learner called in ``dtype`` receives,
    so that the float64 reference is computed from exactly them."""
    return x.to(dtype).to(torch.float64)
