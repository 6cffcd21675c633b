"""MISTAKE: row sums without keepdim=True (the sums divide the columns, not the rows)

tril / tril.sum(dim=-1): the (T,) sums broadcast along the columns, so w[t, s] = 1 / (s + 1)."""
"""Stage 2 - The same running average as one matrix product.

Write the averaging weights of stage 1 as a (T, T) matrix W. Row t lists how
much each step s contributes to output t: 1/(t+1) for s <= t and 0 for the
future steps s > t. For T = 3:

    [[1,   0,   0  ],
     [1/2, 1/2, 0  ],
     [1/3, 1/3, 1/3]]

``torch.tril`` ("triangle, lower") builds exactly this pattern of zeros: it
keeps the diagonal and everything below it (the present and the past) and
zeroes everything above it (the future). Dividing each row of a lower
triangle of ones by its own sum turns the row into an average.

Then ``W @ x`` computes every output at once, because row t of the product is
``sum_s W[t, s] * x[s]``. Matrix multiplication broadcasts the (T, T) matrix
over any leading batch dimensions, so no Python loop is left: the work is a
fixed handful of tensor operations whatever T is, and runs inside one fast
kernel instead of T * B interpreter steps.
"""

import torch


def causal_mean_weights(
    T: int,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """Build the (T, T) running-mean matrix with torch.tril and a row sum.

    Args:
        T: number of time steps.
        device, dtype: where and how to create the matrix (torch defaults if None).

    Returns:
        (T, T) lower-triangular matrix; row t holds 1/(t+1) in columns 0..t and
        exactly 0 above the diagonal, so every row sums to 1.
    """
    ### BEGIN SOLUTION  # stub: return the (T, T) matrix whose row t holds 1/(t+1) in columns 0..t and 0 elsewhere, on the given device and dtype
    ones = torch.ones(T, T, device=device, dtype=dtype)  # (T, T)
    tril = torch.tril(ones)  # (T, T), zeros above the diagonal
    return tril / tril.sum(dim=-1)  # (T, T) / (T, 1): each row sums to 1
    ### END SOLUTION


def causal_mean_matmul(x: torch.Tensor) -> torch.Tensor:
    """Compute stage 1's running average with a single matrix product.

    Args:
        x: (..., T, C) sequences, e.g. (B, T, C).

    Returns:
        (..., T, C) tensor on x's device and dtype, equal to
        ``causal_mean_loop(x)``, computed without any Python loop.
    """
    ### BEGIN SOLUTION  # stub: compute the running average of x with one matrix product by causal_mean_weights (no Python loop)
    T = x.shape[-2]
    weights = causal_mean_weights(T, device=x.device, dtype=x.dtype)  # (T, T)
    return weights @ x  # (T, T) @ (B, T, C) -> (B, T, C), broadcast over B
    ### END SOLUTION
