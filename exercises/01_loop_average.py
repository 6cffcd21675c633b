# Generated from solutions/01_loop_average.py by `make exercises`; edit the solution, not this file.
"""Stage 1 - Averaging the past with plain Python loops.

A language model reads tokens 0..t and predicts token t+1. The crudest way to
let position t gather information from what came before it is to average all
the vectors it is allowed to see:

    out[b, t] = (x[b, 0] + x[b, 1] + ... + x[b, t]) / (t + 1)

This is lossy (word order is gone and every earlier token counts the same), but
it already has the shape of attention: every output is a weighted sum of the
inputs at or before its own position, here with equal weights. The next stages
keep that shape, make it fast, and finally let the model choose the weights.

The loops below are slow on purpose. They are so plain that they act as the
specification: every vectorised version later in the course is checked against
this one.
"""

import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    """Average every prefix of each sequence with explicit Python loops.

    Args:
        x: (B, T, C) batch of B sequences, each of T vectors with C features.
            Extra leading batch dimensions (..., T, C) are accepted too.

    Returns:
        Tensor of the same shape, device and dtype as ``x`` with
        ``out[b, t] = x[b, :t+1].mean(0)``. ``x`` itself is left unchanged.
    """
    # TODO: Implement causal_mean_loop: with two Python loops (over sequences b and
    #       steps t) fill a new tensor with out[b, t] = mean of x[b, 0..t]; never write
    #       into x
    raise NotImplementedError("Implement causal_mean_loop: with two Python loops (over sequences b and steps t) fill a new tensor with out[b, t] = mean of x[b, 0..t]; never write into x")
