"""Stage 6 - Self-attention with learned queries, keys and values.

Stage 4 compared raw embeddings with each other, so a token could only find
tokens that look like itself. Self-attention gives every token three learned
views of itself, each a linear projection of its embedding:

* a query: what this position is looking for,
* a key:   what this position offers to those who look,
* a value: what this position hands over when it is chosen.

Scores are query . key for every pair, scaled by 1/sqrt(d_k) (stage 5, here
d_k = d_out), softmaxed row by row, and the output at each position is the
weighted sum of the values. It is "self" attention because queries, keys and
values all come from the same input x. There is no mask yet: every position
sees the whole sequence, as in an encoder.

Two equivalent ways to hold the projections:

* ``SelfAttentionParams`` keeps three raw (d_in, d_out) matrices as
  ``nn.Parameter`` and computes ``x @ W``. It draws them with ``torch.rand``
  so that it reproduces the numbers printed in the source notebook.
* ``SelfAttentionLinear`` uses ``nn.Linear``, which stores its weight
  transposed, as (d_out, d_in), computes ``x @ weight.T (+ bias)``, and starts
  from a better-scaled random initialisation. This is how real models do it.
"""

import math

import torch
from torch import nn


class SelfAttentionParams(nn.Module):
    """Single-head self-attention with raw ``nn.Parameter`` projection matrices.

    Args:
        d_in: features per input position.
        d_out: features per query, key, value and output position.

    Attributes:
        W_query, W_key, W_value: ``nn.Parameter(torch.rand(d_in, d_out))``,
            created in this order from torch's global generator: the caller
            seeds it (``torch.manual_seed``) before building the module,
            ``__init__`` does not.
    """

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        ### BEGIN SOLUTION  # stub: create self.W_query, self.W_key and self.W_value (in this order), each nn.Parameter(torch.rand(d_in, d_out))
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Attend from every position to every position.

        Args:
            x: (..., T, d_in) input sequences.

        Returns:
            (..., T, d_out) context vectors.
        """
        ### BEGIN SOLUTION  # stub: project x to queries, keys and values; score every query against every key; scale by 1/sqrt(d_out); softmax; average the values
        queries = x @ self.W_query  # (B, T, d_in) @ (d_in, d_out) -> (B, T, d_out)
        keys = x @ self.W_key  # (B, T, d_out)
        values = x @ self.W_value  # (B, T, d_out)
        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)
        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)
        return weights @ values  # (B, T, T) @ (B, T, d_out) -> (B, T, d_out)
        ### END SOLUTION


class SelfAttentionLinear(nn.Module):
    """Single-head self-attention with ``nn.Linear`` projections.

    Args:
        d_in: features per input position.
        d_out: features per query, key, value and output position.
        qkv_bias: whether the three projections have a bias.

    Attributes:
        W_query, W_key, W_value: ``nn.Linear(d_in, d_out, bias=qkv_bias)``.
    """

    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False):
        super().__init__()
        ### BEGIN SOLUTION  # stub: create self.W_query, self.W_key and self.W_value, each nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Attend from every position to every position.

        Args:
            x: (..., T, d_in) input sequences.

        Returns:
            (..., T, d_out) context vectors.
        """
        ### BEGIN SOLUTION  # stub: project x to queries, keys and values; score every query against every key; scale by 1/sqrt(d_out); softmax; average the values
        queries = self.W_query(x)  # (B, T, d_in) -> (B, T, d_out)
        keys = self.W_key(x)  # (B, T, d_out)
        values = self.W_value(x)  # (B, T, d_out)
        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)
        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)
        return weights @ values  # (B, T, d_out)
        ### END SOLUTION
