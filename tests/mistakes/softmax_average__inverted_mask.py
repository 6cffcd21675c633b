"""MISTAKE: inverted mask (the future visible, the past hidden)

A copy of the stage 3 solution with one bug: masked_fill receives the causal mask itself instead of ~mask,
so -inf lands on the visible steps and the last row becomes NaN.

Stage 3 - Hiding the future with -inf, then softmax.

Stage 2 fixed the weights by hand. Attention will instead compute a score for
every pair (t, s) and turn each row of scores into weights. Softmax is the tool
for that: exp makes every score positive, and dividing by the row total makes
each row sum to 1. Larger scores get larger shares.

To stop step t from looking ahead, we overwrite the scores of future steps
(s > t) with -inf *before* the softmax. Since exp(-inf) is exactly 0, the future
gets zero weight, and the remaining steps share the whole budget among
themselves. ``masked_fill(mask, value)`` writes ``value`` where ``mask`` is
True, so we pass it the *negated* causal mask: True on the future.

If every visible score is 0 (no preference yet), each of the t+1 visible
steps gets exp(0) / ((t+1) * exp(0)) = 1/(t+1): exactly the running mean of
stages 1 and 2. Replace those zeros with learned scores and you have attention.

Why -inf rather than a large negative number such as -1e9? -inf gives an exact
0 whatever the other scores are and in every dtype (-1e9 does not even fit in
float16). And since a step may always look at itself (the diagonal stays
visible), no row is entirely -inf; a fully masked row would be 0 / 0 = NaN.
"""

import torch


def causal_mask(T: int, *, device: torch.device | str | None = None) -> torch.Tensor:
    """Return the (T, T) boolean causal mask: True where step t may look at step s.

    Args:
        T: number of time steps.
        device: where to create the mask.

    Returns:
        (T, T) ``torch.bool`` tensor with ``mask[t, s] = (s <= t)``: True on and
        below the diagonal, False on the future.
    """
    ### BEGIN SOLUTION  # stub: return a (T, T) torch.bool tensor that is True where s <= t
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)
    ### END SOLUTION


def masked_uniform_weights(
    T: int,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """Build the running-mean weights as softmax of zeros with the future set to -inf.

    Args:
        T: number of time steps.
        device, dtype: where and how to create the weights.

    Returns:
        (T, T) weights equal to ``causal_mean_weights(T)`` of stage 2: row t is
        1/(t+1) on columns 0..t and exactly 0 on the future.
    """
    ### BEGIN SOLUTION  # stub: turn a (T, T) table of zero scores into weights: set the future to -inf, then softmax over the last dim
    scores = torch.zeros(T, T, device=device, dtype=dtype)  # (T, T), no preference yet
    future = causal_mask(T, device=device)  # (T, T)
    scores = scores.masked_fill(future, float("-inf"))
    return torch.softmax(scores, dim=-1)  # (T, T), each row sums to 1
    ### END SOLUTION


def causal_mean_softmax(x: torch.Tensor) -> torch.Tensor:
    """Compute the running average using the masked-softmax weights.

    Args:
        x: (..., T, C) sequences, e.g. (B, T, C).

    Returns:
        (..., T, C) tensor on x's device and dtype, equal to stage 1's result.
    """
    ### BEGIN SOLUTION  # stub: compute the running average of x with the masked_uniform_weights
    T = x.shape[-2]
    weights = masked_uniform_weights(T, device=x.device, dtype=x.dtype)  # (T, T)
    return weights @ x  # (T, T) @ (B, T, C) -> (B, T, C)
    ### END SOLUTION
