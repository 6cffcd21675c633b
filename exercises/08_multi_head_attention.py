# Generated from solutions/08_multi_head_attention.py by `make exercises`; edit the solution, not this file.
"""Stage 8 - Multi-head attention: several small heads side by side.

One attention head computes one pattern of weights per position, so it can
follow one kind of relation at a time. Multi-head attention runs ``n_heads``
independent heads, each on its own slice of ``head_size = d_out // n_heads``
features, and concatenates their outputs. The total width stays d_out, so the
cost is about that of one big head, but each position can now attend to
several places for several reasons at once.

Rather than keeping n_heads separate modules and looping over them, we project
once to the full width d_out and reshape:

1. ``view`` (or ``reshape``) splits the last dimension, (B, T, d_out) ->
   (B, T, nh, hs). Head h owns features h*hs .. (h+1)*hs - 1. Nothing is copied:
   only the tensor's shape and strides change.
2. ``transpose`` moves the head axis next to the batch: (B, nh, T, hs). Matrix
   products act on the last two dimensions and broadcast over the others, so
   one ``q @ k^T`` now computes the (T, T) scores of every head of every
   sequence at once, and the causal mask of shape (T, T) broadcasts to all.
3. After attention, the inverse: transpose back to (B, T, nh, hs) and flatten
   the heads into (B, T, d_out). The transpose leaves the data out of order in
   memory, so this step needs ``reshape`` (or ``.contiguous().view``), which
   copies it into place.

Finally ``out_proj``, a (d_out, d_out) linear layer, mixes what the heads found.
With the same weights and a causal mask this is exactly what
``torch.nn.MultiheadAttention`` computes; its packed ``in_proj_weight`` is the
three query, key and value weights stacked on top of each other.
"""

import math

import torch
from torch import nn


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Split the feature dimension into heads and move the heads before time.

    Args:
        x: (B, T, C) tensor (any leading dims), with C divisible by ``n_heads``.
        n_heads: number of heads nh.

    Returns:
        (B, nh, T, C // nh) tensor; head h holds features h*hs .. (h+1)*hs - 1.
    """
    # TODO: Implement split_heads: reshape (B, T, C) to (B, nh, T, C // nh); head h
    #       takes features h*hs .. (h+1)*hs - 1
    raise NotImplementedError("Implement split_heads: reshape (B, T, C) to (B, nh, T, C // nh); head h takes features h*hs .. (h+1)*hs - 1")


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Undo ``split_heads``: put the heads back side by side along the features.

    Args:
        x: (B, nh, T, hs) tensor (any leading dims).

    Returns:
        (B, T, nh * hs) tensor.
    """
    # TODO: Implement merge_heads: invert split_heads: (B, nh, T, hs) -> (B, T, nh * hs)
    raise NotImplementedError("Implement merge_heads: invert split_heads: (B, nh, T, hs) -> (B, T, nh * hs)")


class MultiHeadAttention(nn.Module):
    """Causal multi-head self-attention with an output projection.

    Args:
        d_in: features per input position.
        d_out: features per output position; split evenly over the heads.
        n_heads: number of heads; must divide ``d_out`` (else ``ValueError``).
        context_length: longest sequence the module accepts; size of the mask.
        dropout: probability of dropping an attention weight during training.
        qkv_bias: whether the query, key and value projections have a bias.

    Attributes:
        W_query, W_key, W_value: ``nn.Linear(d_in, d_out, bias=qkv_bias)``.
        out_proj: ``nn.Linear(d_out, d_out)``.
        dropout: ``nn.Dropout(dropout)``, applied to the attention weights.
        mask: buffer (persistent: state_dict saves it), (context_length, context_length) bool,
            True where s <= t.
    """

    def __init__(
        self,
        d_in: int,
        d_out: int,
        n_heads: int,
        context_length: int,
        dropout: float = 0.0,
        qkv_bias: bool = False,
    ):
        super().__init__()
        # TODO: Implement MultiHeadAttention.__init__: raise ValueError unless n_heads
        #       divides d_out; create W_query, W_key, W_value (nn.Linear(d_in, d_out,
        #       bias=qkv_bias)), out_proj, self.dropout and the causal mask buffer
        raise NotImplementedError("Implement MultiHeadAttention.__init__: raise ValueError unless n_heads divides d_out; create W_query, W_key, W_value (nn.Linear(d_in, d_out, bias=qkv_bias)), out_proj, self.dropout and the causal mask buffer")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Causal attention of the sequence over itself, in every head at once.

        Args:
            x: (B, T, d_in) input with T <= context_length.

        Returns:
            (B, T, d_out) outputs; output t depends on inputs 0..t only.
        """
        # TODO: Implement MultiHeadAttention.forward: project x, split_heads, causal
        #       scaled attention in every head (mask, softmax, dropout, @ v),
        #       merge_heads, out_proj
        raise NotImplementedError("Implement MultiHeadAttention.forward: project x, split_heads, causal scaled attention in every head (mask, softmax, dropout, @ v), merge_heads, out_proj")
