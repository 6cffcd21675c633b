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


def _first_step_skipped(x):  # the loop starts at t = 1 on zeros_like(x): step 0 is never written and stays 0
    out = causal_mean_loop(x)
    out[..., 0, :] = 0.0
    return out


def _written_into_x(x):  # out = x (not a copy), filled in time order: each step averages the averages before it
    out = x.clone()
    for t in range(x.shape[-2]):
        out[..., t, :] = out[..., : t + 1, :].mean(dim=-2)
    return out


def _divide_by_T(x):
    return x.cumsum(dim=-2) / x.shape[-2]


FIRST_STEP_SKIPPED = "step 0 never written (the loop over t starts at 1; out[0] keeps the 0 it was made with)"
# the label of the graders' "input unchanged" check: here it is what the values show (the loop read back what it
# had written into x)
IN_PLACE = "input modified in place"
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
        FIRST_STEP_SKIPPED: _first_step_skipped,
        IN_PLACE: _written_into_x,
    }
}
