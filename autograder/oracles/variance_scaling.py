"""Stage 5: query-key scores divided by sqrt(d_k).

The reference is one line; the interesting part is the list of wrong scales a learner can pick (every one
of them gives scores of the right shape, so only the values, and the statistics, tell them apart).
"""

import math

import torch

from autograder.graders.attention import FLOOR_DIVIDED, MISSING_SCALE, QK_SWAPPED, SCALE_TIMES

NO_SCALE = MISSING_SCALE  # the words of stages 6 to 11 too
BY_DK = "divided by d_k instead of sqrt(d_k)"
BY_SQRT_T = "divided by sqrt(T) instead of sqrt(d_k)"
BY_SQRT_TK = "divided by sqrt(T_k) instead of sqrt(d_k)"
BY_T = "divided by T instead of sqrt(d_k)"
BY_DMODEL_OVER_T = "divided by d_model / T instead of sqrt(d_k)"
TIMES = SCALE_TIMES
PRECEDENCE = "divided by d_k ** 1/2, which is d_k / 2 (** binds tighter than /)"
PRECEDENCE_UNBRACKETED = "scores / d_k ** 1/2 is (scores / d_k) / 2, a division by 2 * d_k (** binds tighter than /)"
ISQRT = "divided by math.isqrt(d_k), the square root rounded down to a whole number"
# whole-number scales next to math.isqrt's: where one of them equals another size of the input (round(sqrt(8)) = 3
# = T_q), the two explain the answer alike and neither is named, instead of the size
ROUNDED = "divided by round(sqrt(d_k)), the square root rounded to the nearest whole number"
CEILED = "divided by math.ceil(sqrt(d_k)), the square root rounded up to a whole number"
KT_BATCHED = "k.T on batched input (reverses every dim; use k.transpose(-2, -1))"
QT_K = "q^T @ k instead of q @ k^T"


def _mT(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(-2, -1)


def _raw(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return q @ _mT(k)  # (..., T_q, d_k) @ (..., d_k, T_k) -> (..., T_q, T_k)


def scaled_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return _raw(q, k) / math.sqrt(q.shape[-1])


def unscaled_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Not a learner function: the raw scores the graders compare variances with."""
    return _raw(q, k)


EXPECTED = {"scaled_scores": scaled_scores, "unscaled_scores": unscaled_scores}
MISTAKES = {  # where two of them give the same numbers on an input (T_q == T_k, say), neither is named there
    "scaled_scores": {
        NO_SCALE: _raw,
        BY_DK: lambda q, k: _raw(q, k) / q.shape[-1],
        TIMES: lambda q, k: _raw(q, k) * math.sqrt(q.shape[-1]),
        PRECEDENCE: lambda q, k: _raw(q, k) / (q.shape[-1] / 2),
        PRECEDENCE_UNBRACKETED: lambda q, k: _raw(q, k) / q.shape[-1] / 2,
        ISQRT: lambda q, k: _raw(q, k) / max(math.isqrt(q.shape[-1]), 1),
        ROUNDED: lambda q, k: _raw(q, k) / max(round(math.sqrt(q.shape[-1])), 1),
        CEILED: lambda q, k: _raw(q, k) / math.ceil(math.sqrt(q.shape[-1])),
        BY_SQRT_T: lambda q, k: _raw(q, k) / math.sqrt(q.shape[-2]),
        BY_SQRT_TK: lambda q, k: _raw(q, k) / math.sqrt(k.shape[-2]),
        KT_BATCHED: lambda q, k: q @ k.permute(*reversed(range(k.dim()))) / math.sqrt(q.shape[-1]),
        QT_K: lambda q, k: _mT(q) @ k / math.sqrt(q.shape[-1]),
        QK_SWAPPED: lambda q, k: k @ _mT(q) / math.sqrt(q.shape[-1]),
        FLOOR_DIVIDED: lambda q, k: _raw(q, k) // math.sqrt(q.shape[-1]),
        BY_T: lambda q, k: _raw(q, k) / q.shape[-2],
        BY_DMODEL_OVER_T: lambda q, k: _raw(q, k) / (q.shape[-1] / q.shape[-2]),
    }
}
