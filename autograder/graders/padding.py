"""What the graders of stage 9 (padding masks and cross-attention) share: the names of the mistakes they
recognise (the oracle uses the same strings), and PyTorch's own versions of the computation, run here in the
judge on the CPU in float64.

Conventions the checks rest on: in this course a key padding mask is True where a position holds a real token;
``F.scaled_dot_product_attention``'s boolean ``attn_mask`` is True where a query may attend (the same meaning);
``nn.MultiheadAttention``'s ``key_padding_mask`` is True where a key is padding (the opposite meaning).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

F64 = torch.float64

# ───────────────────────────── mistake names (the oracle uses the same strings) ─────────────────────────────

PAD_INVERTED = (
    "padding mask inverted: True taken to mean 'ignore this key' (nn.MultiheadAttention's "
    "key_padding_mask convention); here True marks a real token to attend to"
)
LENGTH_OFF_BY_ONE = (
    "off by one: position lengths[b] counted as a real token (s <= lengths[b] instead of s < lengths[b])"
)
NAN_ROWS = "NaN for a query with no visible key (softmax of a row that is all -inf is 0/0)"
NO_KEY_UNIFORM = (
    "a query with no visible key averages every value (hidden scores set to a large negative number, or its scores "
    "set to 0 and its weights never zeroed after the softmax, give a uniform row) instead of getting zeros"
)
PAD_IGNORED = "padding mask ignored (padded keys get weight)"
PAD_ON_QUERIES = "padding applied to the queries (rows) instead of the keys (columns)"
# mask[:, None, :] against (B, nh, T_q, T_k) scores lines the batch up with the heads (an error unless B == nh)
PAD_OVER_HEADS = (
    "key_padding_mask broadcast over the heads instead of the batch (mask[:, None, :]: use mask[:, None, None, :])"
)
PAD_AFTER_SOFTMAX = "padded keys zeroed after the softmax (the weights no longer sum to 1)"
PAD_ZERO_NOT_INF = "padded keys' scores set to 0 instead of -inf (they still get weight)"
CAUSAL_BOTTOM_RIGHT = (
    "causal mask aligned bottom-right (query t sees keys 0..t + T_k - T_q); PyTorch's is_causal "
    "aligns it top-left: query t sees keys 0..t"
)
CAUSAL_IGNORED = "causal=True ignored (the future leaks in)"
KEYS_FROM_X = "keys and values projected from x instead of context"
SCALE_D_KV = "scaled by sqrt(d_kv) (the context's width) instead of sqrt(head_size)"
QUERIES_FROM_CONTEXT = "queries projected from context and keys from x (the two sequences swapped)"


# ───────────────────────────── PyTorch's own versions ─────────────────────────────


def visible_pairs(T_q: int, T_k: int, mask: torch.Tensor | None, causal: bool) -> torch.Tensor:
    """(B or 1, T_q, T_k) bool: True where query t may look at key s (SDPA's attn_mask meaning)."""
    pairs = torch.ones(1, T_q, T_k, dtype=torch.bool)
    if causal:
        pairs = pairs.tril()
    if mask is not None:
        pairs = pairs & mask.to(torch.bool)[:, None, :]
    return pairs


def sdpa_masked(q, k, v, mask=None, causal=False) -> torch.Tensor:
    """``F.scaled_dot_product_attention`` with the equivalent boolean ``attn_mask`` (float64, CPU). Rows with no
    visible key come back as NaN: compare only the others with it."""
    pairs = visible_pairs(q.shape[-2], k.shape[-2], mask, causal)
    if q.dim() == 4:
        pairs = pairs[:, None]
    return F.scaled_dot_product_attention(q.to(F64), k.to(F64), v.to(F64), attn_mask=pairs)


def rows_with_a_key(T_q: int, T_k: int, mask: torch.Tensor | None, causal: bool) -> torch.Tensor:
    """(B or 1, T_q) bool: the queries that see at least one key."""
    return visible_pairs(T_q, T_k, mask, causal).any(-1)


def torch_cross_attention(x, context, w: dict, n_heads: int, mask=None) -> torch.Tensor:
    """``torch.nn.MultiheadAttention(d_out, n_heads, kdim=d_kv, vdim=d_kv, batch_first=True)`` holding the
    weights ``w`` (the learner's ``state_dict`` layout), float64, eval mode. Its ``key_padding_mask`` is True
    where a key is padding, so it receives ``~mask``. Needs d_q == d_out."""
    d_out, d_kv = w["W_key.weight"].shape
    mha = torch.nn.MultiheadAttention(d_out, n_heads, kdim=d_kv, vdim=d_kv, bias=True, batch_first=True, dtype=F64)
    zeros = torch.zeros(d_out, dtype=F64)
    with torch.no_grad():
        if mha.in_proj_weight is not None:  # d_kv == d_out: the three weights are packed into one
            mha.in_proj_weight.copy_(torch.cat([w[f"{n}.weight"] for n in ("W_query", "W_key", "W_value")]))
        else:
            mha.q_proj_weight.copy_(w["W_query.weight"])
            mha.k_proj_weight.copy_(w["W_key.weight"])
            mha.v_proj_weight.copy_(w["W_value.weight"])
        mha.in_proj_bias.copy_(torch.cat([w.get(f"{n}.bias", zeros) for n in ("W_query", "W_key", "W_value")]))
        mha.out_proj.weight.copy_(w["out_proj.weight"])
        mha.out_proj.bias.copy_(w.get("out_proj.bias", zeros))
        ignore = None if mask is None else ~mask.to(torch.bool)
        return mha.eval()(x.to(F64), context.to(F64), context.to(F64), key_padding_mask=ignore, need_weights=False)[0]
