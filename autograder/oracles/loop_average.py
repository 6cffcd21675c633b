"""Stage 1: the running average. The judge's reference is vectorised (a cumulative sum over the steps divided by
the step count): the learner's loop, ``x[..., :t + 1, :].mean(dim=-2)`` for each t, gives the same values to
float64 rounding, at a few microseconds instead of a Python step per row (the references of stages 2 and 3 at
T = 256 are this one)."""

import torch


def _steps(x: torch.Tensor, start: int = 1) -> torch.Tensor:
    """The step counts start, start + 1, ... as a column that divides ``x``'s rows."""
    return torch.arange(start, start + x.shape[-2], dtype=x.dtype, device=x.device).unsqueeze(-1)


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    return x.cumsum(dim=-2) / _steps(x)


def _sum_not_mean(x):
    return x.cumsum(dim=-2)


def _off_by_one(x):  # x[:t] instead of x[:t+1]: step t averages only the past, and step 0 is empty
    out = torch.zeros_like(x)
    out[..., 1:, :] = x[..., :-1, :].cumsum(dim=-2) / _steps(x[..., 1:, :])
    return out


def _off_by_one_nan(x):  # the same slice from t = 0: the mean of nothing is NaN
    out = _off_by_one(x)
    out[..., 0, :] = float("nan")
    return out


def _mean_over_channels(x):
    return x.cumsum(dim=-2).mean(dim=-1, keepdim=True).expand_as(x) / 1.0


def _mean_of_all_elements(x):  # x[..., :t + 1, :].mean(): steps and channels averaged together
    return (x.cumsum(dim=-2).mean(dim=-1, keepdim=True) / _steps(x)).expand_as(x).clone()


def _full_mean(x):  # looks at the future: every step gets the mean of the whole sequence
    return x.mean(dim=-2, keepdim=True).expand_as(x).clone()


def _divide_by_T(x):
    return x.cumsum(dim=-2) / x.shape[-2]


EXPECTED = {"causal_mean_loop": causal_mean_loop}
MISTAKES = {
    "causal_mean_loop": {
        "sum instead of mean (rows not normalised)": _sum_not_mean,
        "off-by-one slice (x[:t] instead of x[:t+1])": _off_by_one,
        "off-by-one slice (x[:t] instead of x[:t+1]; step 0 averages nothing: NaN)": _off_by_one_nan,
        "averaged over the whole sequence (the future leaks in)": _full_mean,
        "divided by T instead of t+1": _divide_by_T,
        "averaged over channels instead of time": _mean_over_channels,
        "averaged over every element of the past rows (.mean() without dim=-2)": _mean_of_all_elements,
    }
}
