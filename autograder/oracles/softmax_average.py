"""Stage 3: the running mean again, now as softmax over zero scores with the future set to -inf.

The references build the answer the stage-2 way (a lower triangle divided by its row counts), so that the
graders compare the learner's softmax route with an independent construction. Each mistake variant redoes
the learner's route with one thing wrong, which is how the feedback can name it.
"""

import torch

F64 = torch.float64

INVERTED = "inverted mask (the future visible, the past hidden)"
UPPER = "upper instead of lower triangle (torch.triu, or the mask transposed)"
DIAGONAL = "diagonal masked too (a step cannot see itself)"
OFF_BY_ONE = "off-by-one mask (one future step visible: tril(diagonal=1))"
ZERO_FILL = (
    "no mask, or one filled with 0 instead of -inf (zero scores stay zero: the future gets the weight of the past)"
)
AFTER = "mask applied after softmax (rows no longer sum to 1)"
AFTER_INF = "mask applied after softmax (-inf left in the weights)"
WRONG_DIM = "softmax over the wrong dim (columns sum to 1, not rows)"
WRONG_SIDE = "x @ weights instead of weights @ x"


def _softmax(x: torch.Tensor, dim: int) -> torch.Tensor:
    # torch.softmax written out: it equals it in float64, and torch.softmax over the last dim starts a parallel
    # region even for a few numbers, which costs milliseconds per call in a busy judge
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def causal_mask(T: int, **_ignored) -> torch.Tensor:
    s = torch.arange(T)
    return s.unsqueeze(0) <= s.unsqueeze(1)  # [t, s] = s <= t


def masked_uniform_weights(T: int, **_ignored) -> torch.Tensor:
    counts = torch.arange(1, T + 1, dtype=F64).unsqueeze(-1)  # (T, 1): t + 1 visible steps
    return causal_mask(T).to(F64) / counts


def causal_mean_softmax(x: torch.Tensor) -> torch.Tensor:
    return masked_uniform_weights(x.shape[-2]) @ x


# ── the learner's route, with one thing wrong ──────────────────────────────────────────────────────────


def _softmax_route(T: int, *, hide=None, fill=float("-inf"), dim=-1) -> torch.Tensor:
    """zeros → masked_fill(hide, fill) → softmax(dim); ``hide`` is True where the score is overwritten."""
    hide = ~causal_mask(T) if hide is None else hide
    scores = torch.zeros(T, T, dtype=F64).masked_fill(hide, fill)
    return _softmax(scores, dim)


def _after_softmax(T: int, fill: float) -> torch.Tensor:
    return _softmax(torch.zeros(T, T, dtype=F64), -1).masked_fill(~causal_mask(T), fill)


_WEIGHT_VARIANTS = {
    # masked_fill(mask) instead of masked_fill(~mask) (or an inverted mask, negated again): every visible step
    # gets -inf and the future keeps its 0; the last row is entirely -inf, so it becomes NaN
    INVERTED: lambda T: _softmax_route(T, hide=causal_mask(T)),
    UPPER: lambda T: _softmax_route(T, hide=~causal_mask(T).T),  # mask built with triu, then negated
    DIAGONAL: lambda T: _softmax_route(T, hide=~causal_mask(T).tril(-1)),
    OFF_BY_ONE: lambda T: _softmax_route(T, hide=~torch.ones(T, T, dtype=torch.bool).tril(1)),
    ZERO_FILL: lambda T: _softmax_route(T, fill=0.0),
    AFTER: lambda T: _after_softmax(T, 0.0),
    AFTER_INF: lambda T: _after_softmax(T, float("-inf")),
    WRONG_DIM: lambda T: _softmax_route(T, dim=0),
}

MISTAKES = {
    "causal_mask": {
        INVERTED: lambda T, **_: ~causal_mask(T),
        UPPER: lambda T, **_: causal_mask(T).T.clone(),
        DIAGONAL: lambda T, **_: causal_mask(T).tril(-1),
        OFF_BY_ONE: lambda T, **_: torch.ones(T, T, dtype=torch.bool).tril(1),
    },
    "masked_uniform_weights": {name: (lambda T, _f=fn, **_: _f(T)) for name, fn in _WEIGHT_VARIANTS.items()},
    "causal_mean_softmax": {
        **{
            name: (lambda x, _f=fn: _f(x.shape[-2]) @ x)  # type: ignore[misc]
            for name, fn in _WEIGHT_VARIANTS.items()
        },
        WRONG_SIDE: lambda x: x @ masked_uniform_weights(x.shape[-2]).transpose(-2, -1),
    },
}

EXPECTED = {
    "causal_mask": causal_mask,
    "masked_uniform_weights": masked_uniform_weights,
    "causal_mean_softmax": causal_mean_softmax,
}
