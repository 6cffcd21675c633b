"""Stage 2: the running average as a (T, T) matrix product."""

import torch


def causal_mean_weights(T: int, **_ignored) -> torch.Tensor:
    rows = torch.arange(T, dtype=torch.float64)
    w = torch.tril(torch.ones(T, T, dtype=torch.float64))
    return w / (rows + 1).unsqueeze(-1)


def causal_mean_matmul(x: torch.Tensor) -> torch.Tensor:
    return causal_mean_weights(x.shape[-2]) @ x


def _triu_weights(T, **_):
    w = torch.triu(torch.ones(T, T, dtype=torch.float64))
    return w / w.sum(dim=-1, keepdim=True)


def _unnormalised(T, **_):
    return torch.tril(torch.ones(T, T, dtype=torch.float64))


def _normalised_by_columns(T, **_):
    w = torch.tril(torch.ones(T, T, dtype=torch.float64))
    return w / w.sum(dim=0, keepdim=True)


def _shifted_tril(T, diagonal):  # tril(..., diagonal=-1): a step left out of its own average (row 0 is 0 / 0);
    # diagonal=1: each step averages the next one too
    w = torch.tril(torch.ones(T, T, dtype=torch.float64), diagonal=diagonal)
    return w / w.sum(dim=-1, keepdim=True)


def _row_sums_without_keepdim(T, **_):  # w / w.sum(dim=-1): the (T,) sums broadcast along the rows
    w = torch.tril(torch.ones(T, T, dtype=torch.float64))
    return w / w.sum(dim=-1)


def _divided_by_T(T, **_):
    return torch.tril(torch.ones(T, T, dtype=torch.float64)) / T


def _divided_by_t(T, **_):  # counts from torch.arange(T): row 0 divided by 0 (inf on the diagonal, NaN after it)
    w = torch.tril(torch.ones(T, T, dtype=torch.float64))
    return w / torch.arange(T, dtype=torch.float64).unsqueeze(-1)


def _uniform(T, **_):
    return torch.full((T, T), 1.0 / T, dtype=torch.float64)


def _wrong_side(x):  # x @ W instead of W @ x (only square when T == C)
    return x @ causal_mean_weights(x.shape[-2]).transpose(-2, -1)


DIAGONAL = "diagonal excluded (torch.tril(..., diagonal=-1)): a step left out of its own average"
OFF_BY_ONE = "off-by-one mask (torch.tril(..., diagonal=1)): each step averages one future step too"
BY_T = "divided by T instead of t + 1 (the number of steps averaged in row t)"
BY_t = "row t divided by t instead of t + 1 (counts from torch.arange(T) start at 0: use torch.arange(1, T + 1))"
# each column divided by its own row's sum: 1 / (s + 1) at [t, s]
ROW_SUMS_NO_KEEPDIM = (
    "row counts divide the columns, not the rows (a (T,) vector of sums or counts: keepdim=True, or [:, None], missing)"
)
MISTAKES = {
    "causal_mean_weights": {
        "upper instead of lower triangle (torch.triu)": _triu_weights,
        "rows not normalised (tril of ones, no division)": _unnormalised,
        "normalised over columns instead of rows (sum over dim 0)": _normalised_by_columns,
        ROW_SUMS_NO_KEEPDIM: _row_sums_without_keepdim,
        "no mask: uniform weights over the whole sequence": _uniform,
        DIAGONAL: lambda T, **_: _shifted_tril(T, -1),
        OFF_BY_ONE: lambda T, **_: _shifted_tril(T, 1),
        BY_T: _divided_by_T,
        BY_t: _divided_by_t,
    },
    "causal_mean_matmul": {
        "upper instead of lower triangle (torch.triu)": lambda x: _triu_weights(x.shape[-2]) @ x,
        "rows not normalised (tril of ones, no division)": lambda x: _unnormalised(x.shape[-2]) @ x,
        "normalised over columns instead of rows (sum over dim 0)": lambda x: _normalised_by_columns(x.shape[-2]) @ x,
        ROW_SUMS_NO_KEEPDIM: lambda x: _row_sums_without_keepdim(x.shape[-2]) @ x,
        "no mask: uniform weights over the whole sequence": lambda x: _uniform(x.shape[-2]) @ x,
        DIAGONAL: lambda x: _shifted_tril(x.shape[-2], -1) @ x,
        OFF_BY_ONE: lambda x: _shifted_tril(x.shape[-2], 1) @ x,
        BY_T: lambda x: _divided_by_T(x.shape[-2]) @ x,
        BY_t: lambda x: _divided_by_t(x.shape[-2]) @ x,
    },
}
EXPECTED = {"causal_mean_weights": causal_mean_weights, "causal_mean_matmul": causal_mean_matmul}
