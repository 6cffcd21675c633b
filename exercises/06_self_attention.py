# Generated from solutions/06_self_attention.py by `make exercises`; edit the solution, not this file.
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
        # TODO: Implement SelfAttentionParams.__init__: create self.W_query, self.W_key
        #       and self.W_value (in this order), each nn.Parameter(torch.rand(d_in,
        #       d_out))
        raise NotImplementedError("Implement SelfAttentionParams.__init__: create self.W_query, self.W_key and self.W_value (in this order), each nn.Parameter(torch.rand(d_in, d_out))")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Attend from every position to every position.

        Args:
            x: (..., T, d_in) input sequences.

        Returns:
            (..., T, d_out) context vectors.
        """
        # TODO: Implement SelfAttentionParams.forward: project x to queries, keys and
        #       values; score every query against every key; scale by 1/sqrt(d_out);
        #       softmax; average the values
        raise NotImplementedError("Implement SelfAttentionParams.forward: project x to queries, keys and values; score every query against every key; scale by 1/sqrt(d_out); softmax; average the values")


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
        # TODO: Implement SelfAttentionLinear.__init__: create self.W_query, self.W_key
        #       and self.W_value, each nn.Linear(d_in, d_out, bias=qkv_bias)
        raise NotImplementedError("Implement SelfAttentionLinear.__init__: create self.W_query, self.W_key and self.W_value, each nn.Linear(d_in, d_out, bias=qkv_bias)")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Attend from every position to every position.

        Args:
            x: (..., T, d_in) input sequences.

        Returns:
            (..., T, d_out) context vectors.
        """
        # TODO: Implement SelfAttentionLinear.forward: project x to queries, keys and
        #       values; score every query against every key; scale by 1/sqrt(d_out);
        #       softmax; average the values
        raise NotImplementedError("Implement SelfAttentionLinear.forward: project x to queries, keys and values; score every query against every key; scale by 1/sqrt(d_out); softmax; average the values")
