"""Stage 11: the key/value cache and decoding with it.

Decoding with a cache must give the rows of the full causal forward (stage 8's reference), whatever the schedule
of chunks the sequence is fed in. The known mistakes replay the same schedule with one step wrong.
"""

import math

import torch
import torch.nn.functional as F

from autograder.graders import attention as a
from autograder.graders import blockwise as b

from .multi_head_attention import merge_heads, multi_head_attention, split_heads
from .self_attention import project_linear
from . import distinct


def kv_cache_concat(first, second):
    """What ``append`` returns after appending ``first`` then ``second``: both, in order along time."""
    return torch.cat([first, second], dim=-2)


def cached_keys(x, state, n_heads):
    """The projected, head-split keys of ``x`` (B, nh, T, hs)."""
    return split_heads(project_linear(x, state)[1], int(n_heads))


def cached_values(x, state, n_heads):
    return split_heads(project_linear(x, state)[2], int(n_heads))


def kv_decode(x, chunks, state, n_heads):
    """The outputs of feeding ``x`` (B, T, d_in) in chunks of the given sizes through a cache: the full causal
    forward."""
    return multi_head_attention(x, state, int(n_heads))


def kv_step(prefix, x_new, state, n_heads):
    """The output of one step: ``x_new`` after ``prefix`` was cached."""
    return multi_head_attention(torch.cat([prefix, x_new], dim=-2), state, int(n_heads))[..., prefix.shape[-2] :, :]


def kv_step_cached(x, cached_state, k_extra, v_extra, x_new, state, n_heads):
    """The output of a step with ``x_new`` by a module holding ``state``, when the cache holds the keys and values
    of ``x`` projected with ``cached_state`` (another module's weights) and then one more position, ``k_extra`` and
    ``v_extra`` (B, nh, 1, hs), appended by the judge: every new position sees every cached one (its causal offset
    is that of the cache's length) and the new positions before it."""
    nh = int(n_heads)
    q, k_new, v_new = (split_heads(t, nh) for t in project_linear(x_new, state))
    k = torch.cat([cached_keys(x, cached_state, nh), k_extra, k_new], dim=-2)
    v = torch.cat([cached_values(x, cached_state, nh), v_extra, v_new], dim=-2)
    T_new, T_total = q.shape[-2], k.shape[-2]
    visible = torch.ones(T_new, T_total, dtype=torch.bool).tril(T_total - T_new)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~visible, float("-inf"))
    out = merge_heads(torch.softmax(scores, dim=-1) @ v)
    return F.linear(out, state["out_proj.weight"], state.get("out_proj.bias"))


def _decode(x, chunks, state, n_heads, *, offset=True, cached=True, late=False, shift=0):
    """Chunked decoding written out, with the mask offset or the cache switched off, or the offset read after the
    append (``late``: rows T_cached + T_new.., past the mask's last row where the learner's slice would come up
    short; they hide nothing, as no mask would), or the mask rows ``shift`` steps late. Without the cache a step's
    keys are its own positions, numbered 0..T_new - 1 by the mask (its columns), while the rows are the new tokens'
    positions: every new token sees every other one (the catalogue's kv_cache__cache_not_used)."""
    nh = int(n_heads)
    q, k, v = (split_heads(t, nh) for t in project_linear(x, state))
    outs, start = [], 0
    for size in chunks:
        stop = start + int(size)
        first = 0 if cached else start
        scores = q[..., start:stop, :] @ k[..., first:stop, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
        rows = torch.arange(start, stop).unsqueeze(-1) - (0 if offset else start) + (stop - start if late else shift)
        cols = torch.arange(0, stop - first)
        weights = torch.softmax(scores.masked_fill(cols > rows, float("-inf")), dim=-1)
        outs.append(weights @ v[..., first:stop, :])
        start = stop
    out = merge_heads(torch.cat(outs, dim=-2))
    return F.linear(out, state["out_proj.weight"], state.get("out_proj.bias"))


EXPECTED = {
    "kv_cache_keys": kv_cache_concat,
    "kv_cache_values": kv_cache_concat,
    "kv_cached_keys": cached_keys,
    "kv_cached_values": cached_values,
    "kv_decode": kv_decode,
    "kv_step": kv_step,
    "kv_step_cached": kv_step_cached,
}
MISTAKES = {
    "kv_cache_keys": {b.WRONG_CACHE_DIM: lambda a, c: torch.cat([a, c], dim=1)},
    "kv_cache_values": {
        b.WRONG_CACHE_DIM: lambda a, c: torch.cat([a, c], dim=1),
        b.VALUES_NOT_CACHED: lambda a, c: c,
    },
    # the step projected the earlier positions again, with its own weights, and never saw the judge's position
    "kv_step_cached": {b.CACHE_NOT_READ: lambda x, cs, ke, ve, x_new, s, nh: kv_step(x, x_new, s, nh)},
    "kv_decode": distinct(
        kv_decode,
        {
            b.CAUSAL_OFFSET_IGNORED: lambda x, ch, s, nh: _decode(x, ch, s, nh, offset=False),
            b.CACHE_NOT_USED: lambda x, ch, s, nh: _decode(x, ch, s, nh, cached=False),
            b.OFFSET_AFTER_APPEND: lambda x, ch, s, nh: _decode(x, ch, s, nh, late=True),
            # with chunks of at most two tokens, the numbers of rows read after the append (then neither is named)
            a.OFF_BY_ONE_VISIBLE: lambda x, ch, s, nh: _decode(x, ch, s, nh, shift=1),
        },
    ),
}
