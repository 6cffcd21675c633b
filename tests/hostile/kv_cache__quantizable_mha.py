"""Hostile: the attention of every decoding step (scale, scores, causal offset mask, softmax, @ v, heads) is
torch.ao.nn.quantizable.MultiheadAttention, a public nn.MultiheadAttention subclass whose forward is plain
Python over ordinary ops, with identity projections, kept in a global dict (not a submodule).

control: kv_cache__mha.py
expect: zero
"""
"""Stage 11 - Decoding with a key/value cache.

A language model writes one token at a time: it reads the sequence so far,
predicts the next token, appends it and starts again. Run naively, step T
recomputes the queries, keys and values of all T positions and the full
(T, T) causal score matrix, although only the last row is new. Generating T
tokens that way costs about T^2 per step, T^3 in all.

Two facts remove the waste. The keys and values of earlier positions never
change (position s only sees positions 0..s, so appending tokens does not
change what it computed), and the new token's output needs only its own
query against every key. So each layer keeps a cache of the projected,
head-split keys and values, (B, nh, T_cached, hs). A decoding step projects
only the new positions, appends their keys and values to the cache, and
computes scores of shape (B, nh, T_new, T_cached + T_new): one row per new
token instead of the whole (T, T) matrix. The cost of a step drops from T^2 to
T, the cost of generating T tokens from T^3 to T^2, and the memory the cache
takes, 2 * T * d_out numbers per sequence and layer, is what it buys that with.

One detail decides whether it is right: the causal mask. The new tokens are
not at positions 0..T_new - 1 but at T_cached .. T_cached + T_new - 1, so new
token i may see keys 0 .. T_cached + i. With the mask of stage 8, that is rows
T_cached .. T_cached + T_new - 1 of it.
"""

import math

import torch
from torch import nn


_MHA = {}


def _mha(E, nh):
    """torch's own nn.MultiheadAttention subclass (quantizable), its projections off; not a submodule."""
    if (E, nh) not in _MHA:
        from torch.ao.nn.quantizable import MultiheadAttention as QMHA
        state = torch.random.get_rng_state()
        m = QMHA(E, nh, bias=False)
        torch.random.set_rng_state(state)
        m.linear_Q = m.linear_K = m.linear_V = m.out_proj = nn.Identity()
        _MHA[(E, nh)] = m
    return _MHA[(E, nh)]


class KVCache:
    """The keys and values of the positions seen so far, for one attention layer.

    Args:
        max_len: the most positions the cache may hold.
    """

    def __init__(self, max_len: int):
        ### BEGIN SOLUTION  # stub: remember max_len and start empty
        self.max_len = max_len
        self.keys: torch.Tensor | None = None  # (B, nh, T_cached, hs)
        self.values: torch.Tensor | None = None
        ### END SOLUTION

    def append(self, k_new: torch.Tensor, v_new: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Add the keys and values of new positions after those already cached.

        Args:
            k_new: (B, nh, T_new, hs) keys of the new positions.
            v_new: (B, nh, T_new, hs_v) values of the new positions.

        Returns:
            (keys, values): every key and value so far, (B, nh, T_cached, hs) and
            (B, nh, T_cached, hs_v), with T_cached counting the new positions.

        Raises:
            ValueError: when the cache would hold more than ``max_len`` positions
                (nothing is added then).
        """
        ### BEGIN SOLUTION  # stub: raise ValueError past max_len, else concatenate after the cached keys and values along the time dim (-2) and return both
        T_new = k_new.shape[-2]
        if len(self) + T_new > self.max_len:
            raise ValueError(f"the cache holds {len(self)} positions of at most {self.max_len}: "
                             f"{T_new} more do not fit")
        if self.keys is None or self.values is None:
            self.keys, self.values = k_new, v_new
        else:
            self.keys = torch.cat([self.keys, k_new], dim=-2)  # time is dim -2
            self.values = torch.cat([self.values, v_new], dim=-2)
        return self.keys, self.values
        ### END SOLUTION

    def __len__(self) -> int:
        """The number of positions cached (``len(cache)``)."""
        ### BEGIN SOLUTION  # stub: the number of cached positions (0 when empty)
        return 0 if self.keys is None else self.keys.shape[-2]
        ### END SOLUTION

    def reset(self) -> None:
        """Forget every cached position (to start a new sequence)."""
        ### BEGIN SOLUTION  # stub: empty the cache
        self.keys = self.values = None
        ### END SOLUTION


class CachedMultiHeadAttention(nn.Module):
    """Causal multi-head attention (stage 8) that can decode with a ``KVCache``.

    Args:
        d_in: features per input position.
        d_out: features per output position; split evenly over the heads.
        n_heads: number of heads; must divide ``d_out`` (else ``ValueError``).
        context_length: the most positions (cached and new) attention may cover.
        qkv_bias: whether the query, key and value projections have a bias.

    Attributes:
        W_query, W_key, W_value: ``nn.Linear(d_in, d_out, bias=qkv_bias)``.
        out_proj: ``nn.Linear(d_out, d_out)``.
        mask: buffer (persistent: state_dict saves it), (context_length, context_length) bool,
            True where s <= t.
    """

    def __init__(self, d_in: int, d_out: int, n_heads: int, context_length: int, qkv_bias: bool = False):
        super().__init__()
        ### BEGIN SOLUTION  # stub: as stage 8 (without dropout): check n_heads divides d_out, create W_query, W_key, W_value, out_proj and the causal mask buffer
        if d_out % n_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by n_heads ({n_heads})")
        self.n_heads = n_heads
        self.head_size = d_out // n_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())
        ### END SOLUTION

    def forward(self, x: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        """Causal attention of the new positions ``x`` over the cached ones and themselves.

        Args:
            x: (B, T_new, d_in) the new positions (the whole sequence without a cache).
            cache: the keys and values of the positions before ``x``; the new ones
                are appended to it.

        Returns:
            (B, T_new, d_out): the rows of the full causal forward of the whole
            sequence (cached positions, then x) that belong to x.
        """
        ### BEGIN SOLUTION  # stub: project x and split the heads; with a cache, note len(cache) (the offset of x) and append the new keys and values to it; scores (B, nh, T_new, T_total) masked with mask rows offset .. offset + T_new - 1; softmax, @ v, merge, out_proj
        B, T_new, _ = x.shape
        q, k, v = (t.view(B, T_new, self.n_heads, self.head_size).transpose(1, 2)
                   for t in (self.W_query(x), self.W_key(x), self.W_value(x)))
        offset = 0
        if cache is not None:
            offset = len(cache)
            k, v = cache.append(k, v)
        T_total = k.shape[-2]
        merge = lambda t: t.transpose(1, 2).reshape(B, t.shape[-2], -1).transpose(0, 1)  # (T, B, E)
        m = _mha(self.n_heads * self.head_size, self.n_heads)
        m.train(False)
        out, _ = m(merge(q), merge(k), merge(v), need_weights=False,
                   attn_mask=~self.mask[offset:offset + T_new, :T_total])
        return self.out_proj(out.transpose(0, 1))
        ### END SOLUTION
