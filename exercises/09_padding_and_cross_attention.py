# Generated from solutions/09_padding_and_cross_attention.py by `make exercises`; edit the solution, not this file.
"""Stage 9 - Padding masks and cross-attention.

Real batches hold sentences of different lengths. To stack them into one
(B, T, C) tensor, the short ones are filled up to T with padding: positions
that hold no token at all. Attention must never take anything from them, or
the output for "the cat sat" would change with how much padding happened to
follow it in its batch.

A *key padding mask* says, for every sequence of the batch, which positions
hold a real token. It hides padded *keys* (columns of the score matrix): a
query may still sit on a padded position, its output is simply never used.
Like the causal mask of stages 3 and 7, hiding means a score of -inf before
the softmax, so a padded key gets a weight of exactly 0, whatever its value.
Both masks can act together: a position is visible when it is not in the
future *and* holds a real token.

One case needs care. A query can end up with no visible key at all (a
sequence of length 0, say). Its row of scores is all -inf, and softmax of
that row is 0 / 0 = NaN, which then spreads into every gradient of the batch.
We give such a query an output of zeros instead: it attended to nothing.

Mind the convention. Here True means "a real token, attend to it".
``torch.nn.MultiheadAttention``'s ``key_padding_mask`` means the opposite
(True = padding, ignore it), while ``scaled_dot_product_attention``'s boolean
``attn_mask`` means True = attend. Mixing them up silently attends to the
padding and hides the words.

*Cross-attention* lets one sequence read another: in a translation model the
decoder's positions (the queries, x) look at the encoder's output (the keys
and values, ``context``). Nothing else changes: queries come from x, keys and
values from context, the score matrix is (T_q, T_k) and need not be square,
and the padding mask belongs to the context, whose sequences are the ones of
different lengths. When a causal mask is used with T_q != T_k it is aligned
top-left, as in PyTorch: query t sees keys 0..t.
"""

import math

import torch
from torch import nn


def key_padding_mask(lengths: torch.Tensor, T: int, *, device=None) -> torch.Tensor:
    """Which positions of a padded batch hold a real token.

    Args:
        lengths: (B,) integer tensor; sequence b holds ``lengths[b]`` real
            tokens (0 <= lengths[b] <= T), followed by padding.
        T: the padded length.
        device: where to create the mask (default: the device of ``lengths``).

    Returns:
        (B, T) ``torch.bool`` mask, True at position s of sequence b exactly
        when s < lengths[b].
    """
    # TODO: Implement key_padding_mask: (B, T) bool mask, True at position s of sequence
    #       b exactly when s < lengths[b]
    raise NotImplementedError("Implement key_padding_mask: (B, T) bool mask, True at position s of sequence b exactly when s < lengths[b]")


def masked_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    key_padding_mask: torch.Tensor | None = None,
    causal: bool = False,
) -> torch.Tensor:
    """Scaled dot-product attention with a key padding mask and an optional causal mask.

    Args:
        q: (B, T_q, hs) queries; extra dims after B (heads) are allowed:
            (B, nh, T_q, hs).
        k: (B, T_k, hs) keys (with the same extra dims as q).
        v: (B, T_k, hs_v) values (with the same extra dims as q).
        key_padding_mask: None, or a (B, T_k) bool mask, True where key s of
            sequence b is a real token (broadcast over the extra dims).
        causal: when True, query t sees keys 0..t only (aligned top-left).

    Returns:
        (B, T_q, hs_v) outputs (with q's extra dims). Scores are scaled by
        1/sqrt(hs); hidden keys get weight exactly 0; a query with no visible
        key gets an output of zeros, never NaN.
    """
    # TODO: Implement masked_attention: scaled scores; hide padded keys (and the future
    #       when causal) with -inf; softmax; a query with no visible key gets zeros, not
    #       NaN; @ v
    raise NotImplementedError("Implement masked_attention: scaled scores; hide padded keys (and the future when causal) with -inf; softmax; a query with no visible key gets zeros, not NaN; @ v")


class CrossAttention(nn.Module):
    """Multi-head attention of the positions of x over those of another sequence.

    Args:
        d_q: features per query position (of x).
        d_kv: features per context position (keys and values come from it).
        d_out: features per output position; split evenly over the heads
            (``n_heads`` must divide it).
        n_heads: number of heads.
        dropout: probability of dropping an attention weight during training.
        qkv_bias: whether the query, key and value projections have a bias.

    Attributes:
        W_query: ``nn.Linear(d_q, d_out, bias=qkv_bias)``.
        W_key, W_value: ``nn.Linear(d_kv, d_out, bias=qkv_bias)``.
        out_proj: ``nn.Linear(d_out, d_out)``.
        dropout: ``nn.Dropout(dropout)``, applied to the attention weights.
    """

    def __init__(
        self,
        d_q: int,
        d_kv: int,
        d_out: int,
        n_heads: int,
        dropout: float = 0.0,
        qkv_bias: bool = False,
    ):
        super().__init__()
        # TODO: Implement CrossAttention.__init__: create W_query (nn.Linear(d_q,
        #       d_out)), W_key and W_value (nn.Linear(d_kv, d_out)), all with
        #       bias=qkv_bias, out_proj (nn.Linear(d_out, d_out)) and self.dropout
        raise NotImplementedError("Implement CrossAttention.__init__: create W_query (nn.Linear(d_q, d_out)), W_key and W_value (nn.Linear(d_kv, d_out)), all with bias=qkv_bias, out_proj (nn.Linear(d_out, d_out)) and self.dropout")

    def forward(
        self,
        x: torch.Tensor,
        context: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Every position of x attends to the real positions of context.

        Args:
            x: (B, T_q, d_q) the sequence that asks (queries).
            context: (B, T_k, d_kv) the sequence that is read (keys, values).
            key_padding_mask: None, or (B, T_k) bool, True where a context
                position holds a real token.

        Returns:
            (B, T_q, d_out); no causal mask. A query whose context has no real
            token gets ``out_proj`` of zeros (its bias).
        """
        # TODO: Implement CrossAttention.forward: queries from x, keys and values from
        #       context, split into heads; scaled scores with padded keys at -inf (a
        #       query with nothing to see gets zero weights); softmax, dropout, @ v;
        #       merge heads; out_proj
        raise NotImplementedError("Implement CrossAttention.forward: queries from x, keys and values from context, split into heads; scaled scores with padded keys at -inf (a query with nothing to see gets zero weights); softmax, dropout, @ v; merge heads; out_proj")
