"""What the graders of the memory-saving stages (10: blockwise attention, 11: the key/value cache) share: the names
of the mistakes they recognise and the verdicts read from the judge's record of a call (how large the largest
tensor the call's graph creates is, and how much work it does: :func:`autograder.sandbox.evidence.measure`).

Everything here runs in the judge. The figures come from the graph the judge parsed, checked against the learner's
answers and shape-propagated itself; nothing the learner's process reports about sizes is believed.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.checks import fail

# ───────────────────────────── mistake names (the oracles use the same strings) ─────────────────────────────

SUM_NOT_RESCALED = "running sum not rescaled when the maximum grows"
ACC_NOT_RESCALED = "accumulator not rescaled when the maximum grows"
# exp(m - m_new) taken after m was updated is 1: nothing is rescaled
NOT_RESCALED = (
    "running sum and accumulator not rescaled when the maximum grows (exp(m - m_new) taken after m = m_new is 1)"
)
MAX_NOT_UPDATED = "running maximum not updated (exp overflows)"
NORMALISED_PER_BLOCK = "each block normalised on its own (softmax per block)"
DIVIDED_PER_BLOCK = "divided per block instead of once at the end"
REMAINDER_DROPPED = "last partial block dropped (T not divisible by block_size)"
REMAINDER_DROPPED_BOTH = "last partial block of queries and keys dropped"
LOCAL_CAUSAL_OFFSET = "causal mask built from positions within the block (wrong causal offset)"
NO_CAUSAL_MASK = "causal mask ignored (every key visible)"
CAUSAL_NOT_SKIPPED = "blocks wholly in the future computed and masked instead of skipped"
FULL_SCORES = "full T x T scores built"
SOFTMAX_CALLED = "torch.softmax over the whole row (not block by block)"


def record_of(reply: dict) -> dict:
    return reply.get("record") or {}


def softmax_ops(reply: dict, block_size: int, *, what: str) -> dict[str, int]:
    """The softmax-family ops of the call's graph (softmax, log_softmax, logsumexp, logcumsumexp: logcumsumexp's
    last column is a logsumexp) that normalised over more than ``block_size`` entries at once, each with the most
    entries it did, as the judge's replay measured them (``normalised``); empty when every one stayed within a
    block, as a running log-sum-exp taken block by block does."""
    widths = record_of(reply).get("normalised")
    if not isinstance(widths, dict):
        fail(
            f"{what}: the autograder could not measure what your code's softmax reads (its computation could not be "
            "replayed)"
        )
    return {name: width for name, width in widths.items() if width > block_size}


def expect_largest(
    reply: dict, limit: int, full: int | None, *, what: str, allowed: str, scores_only: bool = False
) -> None:
    """The largest tensor the recorded call created holds at most ``limit`` elements (``allowed`` says what that
    limit is, for the learner); ``full``: the elements of the full score matrix, named as a known mistake when
    reached (None: never named, where one row of scores is the whole matrix). ``scores_only``: only tensors whose values depend on both the queries and the keys count (scores and
    what is made from them; a copy of the keys or values does not)."""
    record = record_of(reply)
    largest = record.get("largest_joint" if scores_only else "largest")
    # scratch memory made outside torch (a numpy array made a tensor, written in the call) is a constant to the
    # graph, and counts too; a table the call only reads (positions made at import) does not
    if not scores_only and isinstance(largest, int) and isinstance(record.get("largest_constant"), int):
        largest = max(largest, record["largest_constant"])
    if not isinstance(largest, int):
        fail(
            f"{what}: the autograder could not measure the tensors your code creates (its computation could not "
            "be traced and verified)"
        )
        return
    if largest > limit:
        mistake = FULL_SCORES if full is not None and largest >= full else None
        fail(
            f"{what} created a tensor of {largest} elements; at most {limit} ({allowed}) may exist at once. "
            "Build the scores one block of keys at a time, (..., T_q, block_size), never the whole "
            "(..., T_q, T_k) matrix (nor a (T_q, T_k) mask)."
            + (f"\n  this looks like a known mistake: {mistake}" if mistake else ""),
            mistake,
        )


def expect_peak(reply: dict, limit: int, *, what: str, allowed: str) -> None:
    """At most ``limit`` elements of memory holding values of both the queries and the keys (scores, weights,
    accumulators, outputs) are alive at one time in the recorded call (:func:`autograder.sandbox.evidence.peak_joint`):
    one pass with a running maximum keeps about two blocks of scores; keeping every key block's scores to read them
    again (a second pass) keeps them all."""
    peak = record_of(reply).get("peak_joint")
    if not isinstance(peak, int):
        fail(
            f"{what}: the autograder could not measure the memory your code keeps (its computation could not be traced)"
        )
        return
    if peak > limit:
        fail(
            f"{what} kept {peak} elements of scores and what is made from them alive at once; one pass over the key "
            f"blocks needs at most {limit} ({allowed}). Do not keep each block's scores (in a list) to read them "
            "again: update a running maximum, a running sum and the output accumulator with each block, then let "
            "the block's scores go"
        )


# stage 11 (the key/value cache)
WRONG_CACHE_DIM = "concatenated on the wrong dim (heads, dim 1, instead of time, dim -2)"
VALUES_NOT_CACHED = "keys cached but not values"
CAUSAL_OFFSET_IGNORED = "causal offset of the new tokens ignored (mask rows 0.. instead of T_cached..)"
# rows read after cache.append (T_cached + T_new..) hide nothing: the same numbers as no mask at all when decoding;
# so do the buffer's last rows (self.mask[-T_new:]) wherever the cache holds fewer than context_length positions
OFFSET_AFTER_APPEND = (
    "no causal mask among the new tokens (none applied when a cache is given, or its rows read after cache.append, "
    "T_cached + T_new.., or from the buffer's end, self.mask[-T_new:], which hide nothing): each new token sees the "
    "later new ones"
)
CACHE_NOT_USED = (
    "the cache not used (new tokens attend only to each other: forward ignores the cache, or append returns only the "
    "new keys and values)"
)
UNPROJECTED = "the cache stores the unprojected inputs"
CACHE_NOT_READ = (
    "forward does not read the keys and values the cache holds (it projects earlier positions again, from inputs "
    "kept elsewhere): attend over what cache.append returns"
)
RECOMPUTES = "recomputes the whole sequence every step"
NO_OVERFLOW_CHECK = "no ValueError past max_len"
RESET_KEEPS = "reset() does not empty the cache"


def causal_forward(x, w: dict, n_heads: int):
    """Stage 8's causal multi-head attention with the weights ``w`` (``state_dict`` layout), computed here with
    PyTorch's own ``scaled_dot_product_attention`` in float64: a reference the judge can compute for any input,
    also in a student release (which holds no reference code)."""
    x = x.to(torch.float64)
    B, T, _ = x.shape

    def heads(name):
        y = F.linear(x, w[f"{name}.weight"].to(torch.float64), w.get(f"{name}.bias"))
        return y.view(B, T, n_heads, -1).transpose(1, 2)

    out = F.scaled_dot_product_attention(heads("W_query"), heads("W_key"), heads("W_value"), is_causal=True)
    return F.linear(out.transpose(1, 2).reshape(B, T, -1), w["out_proj.weight"], w.get("out_proj.bias"))
