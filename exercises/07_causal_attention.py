# Generated from solutions/07_causal_attention.py by `make exercises`; edit the solution, not this file.
"""Stage 7 - Causal self-attention, checked against PyTorch.

A model that predicts the next token must not peek at it. Causal attention is
stage 6 plus stage 3's mask: after scaling, the scores of future positions
(s > t) are set to -inf, so the softmax gives them exactly zero weight. A
consequence you can test: changing a later input never changes an earlier
output.

``causal_attention`` is the bare computation on given queries, keys and
values. It must agree with PyTorch's fused kernel,
``torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)``,
whose mask is aligned top-left: query t sees keys 0..t.

``CausalSelfAttention`` wraps it in a module, with two details worth knowing:

* The mask is built once, for the longest sequence the module will see
  (``context_length``), and stored with ``register_buffer``. A buffer is part
  of the module's state like a parameter, so ``.to(device)`` moves it and
  ``state_dict`` saves it, but it is not trained. A shorter input of length T
  uses the top-left corner ``mask[:T, :T]``.
* ``nn.Dropout`` on the attention weights randomly cuts some links between
  positions during training (the surviving weights are scaled by 1/(1-p)), a
  regulariser. In ``eval()`` mode it does nothing.
"""

import math

import torch
from torch import nn


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Scaled dot-product attention in which position t only sees positions 0..t.

    Args:
        q: (..., T_q, hs) queries.
        k: (..., T_k, hs) keys.
        v: (..., T_k, hs_v) values.

    Returns:
        (..., T_q, hs_v) outputs, equal to
        ``F.scaled_dot_product_attention(q, k, v, is_causal=True)``.
    """
    # TODO: Implement causal_attention: scaled dot-product attention in which position t
    #       only attends to positions 0..t (future scores -inf before the softmax)
    raise NotImplementedError("Implement causal_attention: scaled dot-product attention in which position t only attends to positions 0..t (future scores -inf before the softmax)")


class CausalSelfAttention(nn.Module):
    """One causal self-attention head with a registered mask and attention dropout.

    Args:
        d_in: features per input position.
        head_size: features per query, key, value and output position.
        context_length: longest sequence the module accepts; size of the mask.
        dropout: probability of dropping an attention weight during training.
        qkv_bias: whether the three projections have a bias.

    Attributes:
        W_query, W_key, W_value: ``nn.Linear(d_in, head_size, bias=qkv_bias)``.
        dropout: ``nn.Dropout(dropout)``, applied to the attention weights.
        mask: buffer (persistent: state_dict saves it), (context_length, context_length) bool,
            True where s <= t.
    """

    def __init__(
        self,
        d_in: int,
        head_size: int,
        context_length: int,
        dropout: float = 0.0,
        qkv_bias: bool = False,
    ):
        super().__init__()
        # TODO: Implement CausalSelfAttention.__init__: create W_query, W_key, W_value
        #       (nn.Linear(d_in, head_size, bias=qkv_bias)), self.dropout (nn.Dropout)
        #       and a bool causal-mask buffer named mask, of size context_length
        raise NotImplementedError("Implement CausalSelfAttention.__init__: create W_query, W_key, W_value (nn.Linear(d_in, head_size, bias=qkv_bias)), self.dropout (nn.Dropout) and a bool causal-mask buffer named mask, of size context_length")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Causal attention of the sequence over itself.

        Args:
            x: (B, T, d_in) input with T <= context_length.

        Returns:
            (B, T, head_size) outputs; output t depends on inputs 0..t only.
        """
        # TODO: Implement CausalSelfAttention.forward: causal attention of x over itself
        #       using the mask buffer sliced to T, with self.dropout on the attention
        #       weights
        raise NotImplementedError("Implement CausalSelfAttention.forward: causal attention of x over itself using the mask buffer sliced to T, with self.dropout on the attention weights")
