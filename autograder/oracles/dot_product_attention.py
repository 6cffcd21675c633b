"""Stage 4: softmax written by hand, then parameter-free dot-product attention.

References are softmax by its definition (max subtracted, in float64: equal to torch.softmax within 1e-15) and
plain matrix products. The mistake variants are the ways learners usually get this stage wrong; a variant that
cannot run on some input (shapes that do not broadcast) is simply skipped by the oracle.
"""

import torch

NO_MAX = "missing max subtraction (exp overflows for large logits)"
MIN_SHIFT = "minimum subtracted instead of the maximum (exp overflows where logits along dim differ by hundreds)"
DIM_LAST = "dim argument ignored (softmax always over the last dim)"
DIM_ZERO = "dim argument ignored (softmax always over dim 0)"
SUM_NORM = "sum normalisation instead of softmax (no exp)"
NO_KEEPDIM = "sum without keepdim=True (divided by the wrong sums)"
MAX_NO_KEEPDIM = "max without keepdim=True (a different shift per column)"
WHOLE_TENSOR = "normalised over the whole tensor instead of along dim"
NOT_NORMALISED = "rows not normalised (exp without dividing by the sum)"
XT_BATCHED = "x.T on batched input (reverses every dim; use x.transpose(-2, -1))"
XTX = "x^T @ x instead of x @ x^T"
SCALED = "scaled by sqrt(C) (this stage has no scaling)"
WRONG_DIM_ROWS = "softmax over the wrong dim (columns sum to 1, not rows)"
WRONG_DIM_ZERO = "softmax over the wrong dim (dim=0: across the batch)"
NO_SOFTMAX = "no softmax: raw scores @ x"
WEIGHTS_AT_SCORES = "weights @ scores instead of weights @ x"


def _reverse(x: torch.Tensor) -> torch.Tensor:
    """What ``x.T`` does on a tensor that is not 2-D: reverse every dimension."""
    return x.permute(*reversed(range(x.dim())))


def _mT(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(-2, -1)


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """torch.softmax's definition, in float64 (equal to it within 1e-15).

    Written out because torch.softmax over the last dim starts a parallel region even for a few numbers,
    which costs milliseconds per call on a busy machine; the judge calls this thousands of times."""
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def attention_scores(x: torch.Tensor) -> torch.Tensor:
    return x @ _mT(x)  # (..., T, C) @ (..., C, T) -> (..., T, T)


def attention_weights(scores: torch.Tensor) -> torch.Tensor:
    return softmax(scores, dim=-1)


def context_vectors(x: torch.Tensor) -> torch.Tensor:
    return attention_weights(attention_scores(x)) @ x


# ── softmax mistakes (they take the same ``dim`` argument as the learner's function) ──────────────────────


def _naive(x, dim=-1):
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


def _min_shift(x, dim=-1):
    e = torch.exp(x - x.amin(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def _sum_norm(x, dim=-1):
    return x / x.sum(dim=dim, keepdim=True)


def _no_keepdim(x, dim=-1):
    e = torch.exp(x)
    return e / e.sum(dim=dim)  # broadcasts against the wrong axis (or fails)


def _no_keepdim_shifted(x, dim=-1):
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim)


def _max_no_keepdim(x, dim=-1):
    e = torch.exp(x - x.amax(dim=dim))
    return e / e.sum(dim=dim, keepdim=True)


def _whole_tensor(x, dim=-1):
    e = torch.exp(x - x.max())
    return e / e.sum()


_SOFTMAX_MISTAKES = {
    DIM_LAST: lambda x, dim=-1: softmax(x, dim=-1),
    DIM_ZERO: lambda x, dim=-1: softmax(x, dim=0),
    SUM_NORM: _sum_norm,
    NO_KEEPDIM: _no_keepdim,
    MAX_NO_KEEPDIM: _max_no_keepdim,
    WHOLE_TENSOR: _whole_tensor,
    NOT_NORMALISED: lambda x, dim=-1: torch.exp(x),
}

# ── attention mistakes ────────────────────────────────────────────────────────────────────────────────

_SCORE_MISTAKES = {
    XT_BATCHED: lambda x: x @ _reverse(x),
    XTX: lambda x: _mT(x) @ x,
    SCALED: lambda x: x @ _mT(x) / x.shape[-1] ** 0.5,
}

_WEIGHT_MISTAKES = {
    WRONG_DIM_ROWS: lambda s: softmax(s, dim=-2),
    WRONG_DIM_ZERO: lambda s: softmax(s, dim=0),
    SUM_NORM: lambda s: s / s.sum(dim=-1, keepdim=True),
    NOT_NORMALISED: torch.exp,
    NO_KEEPDIM: lambda s: _no_keepdim(s, -1),
}

_CONTEXT_MISTAKES = {
    **{
        name: (lambda x, _f=fn: attention_weights(_f(x)) @ x)  # type: ignore[misc]
        for name, fn in _SCORE_MISTAKES.items()
    },
    **{
        name: (lambda x, _f=fn: _f(attention_scores(x)) @ x)  # type: ignore[misc]
        for name, fn in _WEIGHT_MISTAKES.items()
    },
    NO_SOFTMAX: lambda x: attention_scores(x) @ x,
    WEIGHTS_AT_SCORES: lambda x: context_weights(x) @ attention_scores(x),
}


def context_weights(x):
    return attention_weights(attention_scores(x))


EXPECTED = {
    "softmax_naive": softmax,
    "softmax_stable": softmax,
    "attention_scores": attention_scores,
    "attention_weights": attention_weights,
    "context_vectors": context_vectors,
}
MISTAKES = {
    "softmax_naive": dict(_SOFTMAX_MISTAKES),
    "softmax_stable": {NO_MAX: _naive, MIN_SHIFT: _min_shift, **_SOFTMAX_MISTAKES, NO_KEEPDIM: _no_keepdim_shifted},
    "attention_scores": _SCORE_MISTAKES,
    "attention_weights": _WEIGHT_MISTAKES,
    "context_vectors": _CONTEXT_MISTAKES,
}
