"""Hostile: nn.MultiheadAttention's fused kernel reached through a nested tensor, below autograd
(torch._C._AutoDispatchBelowAutograd skips the Autograd kernel): the NestedTensorCPU kernel of
aten::_native_multi_head_attention is a whole fused attention. The file is the reference solution plus that call at
import. The switch-off replaces the kernel on every dispatch key it has, so the call ends the child.

control: multi_head_attention__mha_forward.py
expect: zero
"""
import torch as _t


def _fused_kernel_runs():
    E, nh, T = 8, 2, 5
    g = _t.Generator().manual_seed(0)
    x = _t.randn(2, T, E, generator=g)
    w, b = _t.randn(3 * E, E, generator=g) * 0.3, _t.randn(3 * E, generator=g) * 0.1
    pw, pb = _t.randn(E, E, generator=g) * 0.3, _t.randn(E, generator=g) * 0.1
    nt = _t.nested.nested_tensor([x[0], x[1]])
    with _t.no_grad(), _t._C._AutoDispatchBelowAutograd():
        out, _ = _t._native_multi_head_attention(nt, nt, nt, E, nh, w, b, pw, pb, None, False)
    out = out.to_padded_tensor(0.0)
    q, k, v = (x @ w.chunk(3)[i].T + b.chunk(3)[i] for i in range(3))
    sh = lambda z: z.reshape(2, T, nh, E // nh).transpose(1, 2)
    a = _t.softmax(sh(q) @ sh(k).transpose(-2, -1) / (E // nh) ** 0.5, -1) @ sh(v)
    ref = a.transpose(1, 2).reshape(2, T, E) @ pw.T + pb
    assert (out - ref).abs().max() < 1e-5, "fused kernel gave a different answer"


_fused_kernel_runs()

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
    ### BEGIN SOLUTION  # stub: reshape (B, T, C) to (B, nh, T, C // nh); head h takes features h*hs .. (h+1)*hs - 1
    *lead, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError(f"cannot split {C} features into {n_heads} equal heads")
    x = x.reshape(*lead, T, n_heads, C // n_heads)  # (B, T, nh, hs), a view when possible
    return x.transpose(-3, -2)  # (B, nh, T, hs)
    ### END SOLUTION


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Undo ``split_heads``: put the heads back side by side along the features.

    Args:
        x: (B, nh, T, hs) tensor (any leading dims).

    Returns:
        (B, T, nh * hs) tensor.
    """
    ### BEGIN SOLUTION  # stub: invert split_heads: (B, nh, T, hs) -> (B, T, nh * hs)
    *lead, nh, T, hs = x.shape
    x = x.transpose(-3, -2)  # (B, T, nh, hs), no longer contiguous
    return x.reshape(*lead, T, nh * hs)  # (B, T, C), copies into place
    ### END SOLUTION


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
        ### BEGIN SOLUTION  # stub: raise ValueError unless n_heads divides d_out; create W_query, W_key, W_value (nn.Linear(d_in, d_out, bias=qkv_bias)), out_proj, self.dropout and the causal mask buffer
        if d_out % n_heads != 0:
            raise ValueError(
                f"d_out ({d_out}) must be divisible by n_heads ({n_heads}): "
                f"each head gets d_out // n_heads features"
            )
        self.n_heads = n_heads
        self.head_size = d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        mask = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("mask", mask)  # (context_length, context_length)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Causal attention of the sequence over itself, in every head at once.

        Args:
            x: (B, T, d_in) input with T <= context_length.

        Returns:
            (B, T, d_out) outputs; output t depends on inputs 0..t only.
        """
        ### BEGIN SOLUTION  # stub: project x, split_heads, causal scaled attention in every head (mask, softmax, dropout, @ v), merge_heads, out_proj
        T = x.shape[-2]
        if T > self.mask.shape[0]:
            raise ValueError(f"sequence length {T} exceeds context_length {self.mask.shape[0]}")
        q = split_heads(self.W_query(x), self.n_heads)  # (B, T, d_out) -> (B, nh, T, hs)
        k = split_heads(self.W_key(x), self.n_heads)  # (B, nh, T, hs)
        v = split_heads(self.W_value(x), self.n_heads)  # (B, nh, T, hs)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T, T)
        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, nh, T, T)
        out = merge_heads(weights @ v)  # (B, nh, T, hs) -> (B, T, d_out)
        return self.out_proj(out)  # (B, T, d_out)
        ### END SOLUTION
