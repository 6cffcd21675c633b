"""Stage 9, public checks: key padding masks, masked attention, and cross-attention against PyTorch's own.

Values to match: the oracle's references (float64, CPU), ``F.scaled_dot_product_attention`` given the equivalent
boolean ``attn_mask`` and ``nn.MultiheadAttention`` given the learner's weights and ``key_padding_mask = ~mask``
(its True means "ignore"), both computed here in the judge. Recorded calls are traced and replayed by the judge:
reaching a fused attention kernel earns nothing. Fixed inputs only (stored for student releases).
"""

import torch

from autograder import oracle
from autograder.checks import (
    check,
    diagnose,
    expect_close,
    expect_kept,
    expect_meta,
    expect_precise,
    expect_shape,
    fail,
    heatmaps,
    tolerance,
)
from autograder.graders import attention as a
from autograder.graders import padding as p
from autograder.graders.attention import (
    biased,
    expect_close_by_hand,
    explained,
    grads_of,
    linear_weights,
    new_module,
    require_by_hand,
    weight_names,
)
from autograder.graders.inputs import fixed

STAGE = "padding_and_cross_attention"
F64 = torch.float64
HINT = (
    "Create self.W_query = nn.Linear(d_q, d_out, bias=qkv_bias), self.W_key and self.W_value = "
    "nn.Linear(d_kv, d_out, bias=qkv_bias), and self.out_proj = nn.Linear(d_out, d_out)"
)


def lengths(*n):
    return torch.tensor(n, dtype=torch.int64)


def mask_of(ns, T):
    """The key padding mask of lengths ``ns`` (True = a real token), built here in the judge."""
    return torch.arange(T)[None, :] < lengths(*ns)[:, None]


# q (3, 4, 4), k (3, 6, 4), v (3, 6, 3): T_q != T_k, hs != hs_v
Q, K, V = (fixed(3, 4, 4, seed=901, low=-2, high=2), fixed(3, 6, 4, seed=902, low=-2, high=2), fixed(3, 6, 3, seed=903))
Q7 = fixed(3, 7, 4, seed=904, low=-2, high=2)  # T_q > T_k
PAD = mask_of((6, 3, 1), 6)  # every sequence has a real token
EMPTY = mask_of((6, 0, 2), 6)  # sequence 1 has none


def shape_of(*ts):
    return ", ".join(str(tuple(t.shape)) for t in ts)


def describe(mask, causal):
    parts = []
    if mask is not None:
        parts.append(f"key_padding_mask with lengths {mask.sum(-1).tolist()}")
    if causal:
        parts.append("causal=True")
    return ", ".join(parts) or "no mask"


def attention(student, q, k, v, mask=None, causal=False, *, record=False, **kw):
    """The learner's masked_attention(q, k, v, key_padding_mask=mask, causal=causal) as a full reply."""
    what = f"masked_attention(q, k, v of shapes {shape_of(q, k, v)}, {describe(mask, causal)})"
    kwargs = {"causal": causal} if causal else {}
    if mask is not None:
        kwargs["key_padding_mask"] = mask
    reference = (lambda q, k, v: oracle.expected("masked_attention", q, k, v, mask, causal)) if record else False
    with explained(student, what):
        reply = student.call("masked_attention", q, k, v, full=True, record=reference, **{"cast": F64, **kw}, **kwargs)
    return reply, what


def compare_with_sdpa(student, q, k, v, mask, causal, *, record=False):
    """Parity with SDPA on the rows that see a key (every row here), the learner's call recorded when asked."""
    expected = p.sdpa_masked(q, k, v, mask, causal)
    known = oracle.mistakes("masked_attention", q, k, v, mask, causal)
    reply, what = attention(student, q, k, v, mask, causal, record=record)
    check_value = expect_close_by_hand if record else (lambda r, *x, **kw: expect_close(r["value"], *x, **kw))
    check_value(
        reply,
        expected,
        what=what + ", compared with F.scaled_dot_product_attention and the same boolean attn_mask",
        mistakes=known,
    )


# ───────────────────────────── key_padding_mask ─────────────────────────────


@check("key_padding_mask: (B, T) bool, True exactly where a position holds a real token", weight=2)
def test_mask_values(student):
    for ns, T in (((3, 5, 0, 1), 5), ((2,), 4), ((1, 1), 1)):
        n = lengths(*ns)
        want, known = oracle.expected("key_padding_mask", n, T), oracle.mistakes("key_padding_mask", n, T)
        what = f"key_padding_mask(lengths={list(ns)}, T={T})"
        with explained(student, what):
            got = expect_shape(student.call("key_padding_mask", n, T), (len(ns), T), what)
        if got.dtype != "bool":
            fail(
                f"{what} returned dtype {got.dtype}; a mask should be torch.bool, so that ~ and masked_fill "
                "treat it as True/False (create it with a comparison such as positions < lengths)"
            )
        got_mask = got.t.to(torch.bool)
        if torch.equal(got_mask, want):
            continue
        mistake = diagnose(got_mask.to(F64), {k: v.to(F64) for k, v in known.items()}, 0, 0)
        rows = [
            f"  lengths[{b}] = {ns[b]}: expected {''.join('1' if x else '.' for x in want[b].tolist())}   got "
            f"{''.join('1' if x else '.' for x in got_mask[b].tolist())}"
            for b in range(len(ns))
        ]
        fail(
            "\n".join(
                [f"{what} has the wrong pattern (1 = a real token, . = padding):", *rows]
                + ([f"  this looks like a known mistake: {mistake}"] if mistake else [])
            ),
            mistake,
            heatmaps(want.to(F64), got_mask.to(F64), what),
        )


@check("key_padding_mask: device argument honoured; without it, the mask is on the device of lengths")
def test_mask_device(student, device):
    expected = oracle.expected("key_padding_mask", lengths(4, 2), 4).to(F64)
    for what, kw in (
        (f"key_padding_mask(lengths, 4, device={device!r})", {"device": device}),
        (f"key_padding_mask(lengths on {device}, 4)", {"to": device}),
    ):
        with explained(student, what):
            got = student.call("key_padding_mask", lengths(4, 2), 4, **kw)
        expect_meta(got, device=device, what=what, expected=expected)


# ───────────────────────────── masked_attention ─────────────────────────────


@check(
    "masked_attention: with a key padding mask, equals scaled_dot_product_attention with the same boolean "
    "attn_mask (T_q != T_k, hs != hs_v)",
    weight=3,
)
def test_padding_sdpa(student):
    compare_with_sdpa(student, Q, K, V, PAD, False, record=True)
    compare_with_sdpa(student, Q, K, V, None, False)


@check(
    "masked_attention: causal=True is aligned top-left, query t sees keys 0..t (T_q == T_k, T_q < T_k and T_q > T_k)",
    weight=2,
)
def test_causal_sdpa(student):
    # square first: the one case where keys and queries swapped (k @ q^T) gives an answer to name, not a shape error
    compare_with_sdpa(student, Q, K[:, :4].clone(), V[:, :4].clone(), None, True)
    compare_with_sdpa(student, Q, K, V, None, True)
    compare_with_sdpa(student, Q7, K[:, :5].clone(), V[:, :5].clone(), None, True)
    compare_with_sdpa(student, Q, K, V, PAD, True)


@check("masked_attention: a query with no visible key gets zeros, never NaN; the other rows as before", weight=2)
def test_no_visible_key(student):
    for mask, causal in ((EMPTY, False), (EMPTY, True)):
        expected = oracle.expected("masked_attention", Q, K, V, mask, causal)
        known = oracle.mistakes("masked_attention", Q, K, V, mask, causal)
        reply, what = attention(student, Q, K, V, mask, causal)
        got = expect_shape(reply["value"], (3, 4, 3), what)
        if not bool(torch.isfinite(got.t).all()):
            mistake = diagnose(got.t, known, *tolerance(F64), expected=expected)
            fail(
                f"{what}: the output has NaN or inf in the rows of sequence 1, whose keys are all padding. Its "
                "scores are all -inf, and softmax of such a row is 0 / 0. Find the queries that see no key "
                "(visible.any(-1)) and give them weights of 0 (for example: fill their scores with 0 before the "
                "softmax and their weights with 0 after it)."
                + (f"\n  this looks like a known mistake: {mistake}" if mistake else ""),
                mistake,
            )
        expect_close(got, expected, what=what + ": sequence 1 has no real key, so its outputs are 0", mistakes=known)


@check("masked_attention: padded keys never influence any output", weight=2)
def test_padding_has_no_influence(student):
    hidden = ~PAD[:, :, None]  # (B, T_k, 1): the padded keys
    k2 = torch.where(hidden, fixed(*K.shape, seed=905, low=-40, high=40), K)
    v2 = torch.where(hidden, fixed(*V.shape, seed=906, low=-40, high=40), V)
    expected = oracle.expected("masked_attention", Q, K, V, PAD, False)
    for k, v, note in ((K, V, ""), (k2, v2, " (the padded keys and values replaced by others, up to +-40)")):
        known = oracle.mistakes("masked_attention", Q, k, v, PAD, False)
        reply, what = attention(student, Q, k, v, PAD)
        expect_close(reply["value"], expected, what=what + note + ": padding must change nothing", mistakes=known)


@check("masked_attention: heads as an extra dim, q (B, nh, T_q, hs) with a (B, T_k) mask")
def test_heads(student):
    q, k, v = (
        fixed(2, 3, 4, 2, seed=907, low=-2, high=2),
        fixed(2, 3, 5, 2, seed=908, low=-2, high=2),
        fixed(2, 3, 5, 2, seed=909),
    )
    mask = mask_of((5, 2), 5)
    compare_with_sdpa(student, q, k, v, mask, False)


@check("masked_attention written by hand: no scaled_dot_product_attention (or another fused kernel)", weight=2)
def test_by_hand(student):
    expected = oracle.expected("masked_attention", Q, K, V, PAD, True)
    reply, what = attention(student, Q, K, V, PAD, True, record=True, cast=torch.float32)
    require_by_hand(reply, what, expected, oracle.mistakes("masked_attention", Q, K, V, PAD, True))


@check("masked_attention: inputs unchanged, dtype and device kept")
def test_attention_meta(student, device):
    expected = oracle.expected("masked_attention", Q, K, V, PAD, True)
    for dtype in (torch.float32,) if device == "mps" else (torch.float32, F64):
        reply, what = attention(student, Q, K, V, PAD, True, to=device, cast=dtype, return_inputs=True)
        what += f" ({str(dtype)[6:]} on {device})"
        known = oracle.mistakes("masked_attention", Q, K, V, PAD, True)
        expect_kept(reply, what, expected, shape=(3, 4, 3), dtype=dtype, device=device, mistakes=known)


# ───────────────────────────── CrossAttention ─────────────────────────────


def layers(d_q, d_kv, d_out):
    return {"W_query": (d_q, d_out), "W_key": (d_kv, d_out), "W_value": (d_kv, d_out), "out_proj": (d_out, d_out)}


def module(
    student,
    d_q,
    d_kv,
    d_out,
    nh,
    *,
    bias=False,
    wseed=910,
    dtype=F64,
    dropout=0.0,
    weights=None,
    hint=HINT,
    bias_values=False,
):
    """CrossAttention(d_q, d_kv, d_out, nh) in ``dtype`` holding ``weights`` (default: fixed ones from ``wseed``,
    zero biases unless ``bias_values``, see :func:`linear_weights`); returns (handle, weights)."""
    w = (
        weights
        if weights is not None
        else linear_weights(layers(d_q, d_kv, d_out), bias=biased(bias), seed=wseed, bias_values=bias_values)
    )
    handle = new_module(
        student,
        "CrossAttention",
        d_q,
        d_kv,
        d_out,
        nh,
        dropout=dropout,
        qkv_bias=bias,
        weights=w,
        what=f"CrossAttention({d_q}, {d_kv}, {d_out}, n_heads={nh}, qkv_bias={bias})",
        hint=hint,
        dtype=dtype,
    )
    return handle, handle.held


X = fixed(3, 4, 5, seed=911, low=-2, high=2)  # (B, T_q, d_q)
CTX = fixed(3, 6, 3, seed=912, low=-2, high=2)  # (B, T_k, d_kv)


def cross_values(student, handle, w, nh, x, ctx, mask, *, record=False, expected=None, note=""):
    d_out = w["W_query.weight"].shape[0]
    what = (
        f"CrossAttention({x.shape[-1]}, {ctx.shape[-1]}, {d_out}, n_heads={nh})(x {tuple(x.shape)}, "
        f"context {tuple(ctx.shape)}"
        f"{', key_padding_mask with lengths ' + str(mask.sum(-1).tolist()) if mask is not None else ''})"
    )
    args = (x, ctx) if mask is None else (x, ctx, mask)
    reference = oracle.expected("cross_attention", x, ctx, w, nh, mask)
    known = oracle.mistakes("cross_attention", x, ctx, w, nh, mask)
    with explained(student, what):
        reply = handle(
            *args,
            cast=F64,
            full=True,
            record=record and (lambda x, c, *m: oracle.expected("cross_attention", x, c, w, nh, mask)),
        )
    check_value = expect_close_by_hand if record else (lambda r, *e, **kw: expect_close(r["value"], *e, **kw))
    check_value(reply, reference if expected is None else expected, what=what + note, mistakes=known)


@check(
    "CrossAttention: W_query is nn.Linear(d_q, d_out), W_key and W_value nn.Linear(d_kv, d_out), out_proj "
    "nn.Linear(d_out, d_out)",
    construction=True,
)
def test_structure(student):
    for bias in (False, True):
        info = student.new("CrossAttention", 5, 3, 6, 2, qkv_bias=bias, seed=123).info
        a.expect_structure(
            info,
            linears={"W_query": (5, 6, bias), "W_key": (3, 6, bias), "W_value": (3, 6, bias), "out_proj": (6, 6, True)},
            dropout=True,
            what=f"CrossAttention(5, 3, 6, n_heads=2, qkv_bias={bias})",
        )


@check(
    "CrossAttention: values with the same weights (d_q != d_kv, T_q != T_k, padding, nh = 1 and nh > 1, bias)", weight=3
)
def test_values(student):
    for nh, bias in ((1, False), (3, True)):
        handle, w = module(student, 5, 3, 6, nh, bias=bias, wseed=913 + nh, bias_values=True)  # the biases' check
        cross_values(student, handle, w, nh, X, CTX, PAD, record=nh == 3)
        cross_values(student, handle, w, nh, X, CTX, None)


@check("CrossAttention: queries come from x, keys and values from context")
def test_keys_from_context(student):
    x, ctx = fixed(2, 5, 6, seed=915, low=-2, high=2), fixed(2, 5, 6, seed=916, low=-2, high=2)
    handle, w = module(student, 6, 6, 6, 2, wseed=917)
    cross_values(
        student, handle, w, 2, x, ctx, None, note=": the queries are projected from x, the keys and values from context"
    )
    cross_values(student, handle, w, 2, x, ctx, mask_of((5, 2), 5))


@check(
    "CrossAttention: equals torch.nn.MultiheadAttention(d_out, n_heads, kdim=d_kv, vdim=d_kv) with the same "
    "weights, whose key_padding_mask is True where a key is padding",
    weight=2,
)
def test_torch_mha(student):
    x = fixed(3, 4, 6, seed=918, low=-2, high=2)  # d_q == d_out
    for nh, bias in ((2, True), (3, False)):
        handle, w = module(student, 6, 3, 6, nh, bias=bias, wseed=919 + nh)
        cross_values(
            student,
            handle,
            w,
            nh,
            x,
            CTX,
            PAD,
            record=nh == 2,
            expected=p.torch_cross_attention(x, CTX, w, nh, PAD),
            note=", compared with nn.MultiheadAttention given key_padding_mask = ~mask (its True means "
            "'ignore this key', the opposite of this course's mask)",
        )


@check("CrossAttention: a context with no real token gives out_proj of zeros (its bias), never NaN")
def test_empty_context(student):
    handle, w = module(student, 5, 3, 6, 2, wseed=922, bias_values=True)  # out_proj(0) is its bias
    mask = mask_of((6, 0, 2), 6)
    cross_values(
        student,
        handle,
        w,
        2,
        X,
        CTX,
        mask,
        note=": sequence 1 has no real token in its context, so its outputs are out_proj(0) = out_proj.bias",
    )


@check("CrossAttention: padded context positions never influence the output")
def test_context_padding_has_no_influence(student):
    handle, w = module(student, 5, 3, 6, 2, wseed=923)
    ctx2 = torch.where(~PAD[:, :, None], fixed(*CTX.shape, seed=924, low=-40, high=40), CTX)
    expected = oracle.expected("cross_attention", X, CTX, w, 2, PAD)
    cross_values(
        student,
        handle,
        w,
        2,
        X,
        ctx2,
        PAD,
        expected=expected,
        note=" (the padded context positions replaced by others, up to +-40): padding must change nothing",
    )


@check("CrossAttention written by hand: no nn.MultiheadAttention or scaled_dot_product_attention", weight=2)
def test_module_by_hand(student):
    handle, w = module(student, 5, 3, 6, 2, wseed=926, dtype=torch.float32)
    expected = oracle.expected("cross_attention", X, CTX, w, 2, PAD)
    what = "CrossAttention(5, 3, 6, 2)(x, context, key_padding_mask)"
    with explained(student, what):
        reply = handle(
            X,
            CTX,
            PAD,
            cast=torch.float32,
            full=True,
            record=lambda x, c, m: oracle.expected("cross_attention", x, c, w, 2, m),
        )
    require_by_hand(reply, "CrossAttention.forward", expected, oracle.mistakes("cross_attention", X, CTX, w, 2, PAD))


@check(
    "CrossAttention: gradients reach W_query, W_key, W_value and out_proj and equal the reference, "
    "finite when a context of the batch has no real token"
)
def test_gradients(student):
    handle, w = module(student, 5, 3, 6, 2, bias=True, wseed=925)
    up = fixed(3, 4, 6, seed=926)
    # sequence 1 has no real token: a NaN made in its softmax (and zeroed only afterwards, nan_to_num) still
    # reaches every weight's gradient, the whole batch's
    what = "CrossAttention(5, 3, 6, n_heads=2, qkv_bias=True), context lengths (6, 0, 2): backward of sum(out * u)"
    with explained(student, what):
        grads = grads_of(handle(X, CTX, EMPTY, cast=F64, upstream=up, full=True), weight_names(w), what, up)
    for name in weight_names(w):
        expect_close(
            grads[name],
            oracle.expected("cross_attention_grad", name, X, CTX, up, w, 2, EMPTY),
            what=f"{what}: gradient of {name} (a query that sees no key must pass back zeros, not NaN)",
        )


@check("CrossAttention: inputs unchanged, dtype and device kept")
def test_module_meta(student, device):
    for dtype in (torch.float32,) if device == "mps" else (torch.float32, F64):
        handle, w = module(student, 5, 3, 6, 2, wseed=928, dtype=dtype)
        handle.to(device, dtype)
        expected = oracle.expected("cross_attention", X, CTX, w, 2, PAD)
        what = f"CrossAttention(5, 3, 6, 2)(x, context, key_padding_mask) ({str(dtype)[6:]} on {device})"
        with explained(student, what):
            reply = handle(X, CTX, PAD, to=device, cast=dtype, full=True, return_inputs=True)
        known = oracle.mistakes("cross_attention", X, CTX, w, 2, PAD)
        expect_kept(reply, what, expected, shape=(3, 4, 6), dtype=dtype, device=device, mistakes=known)


@check("keeps the input's precision (float64 in, float64 accuracy out)")
def test_precision(student):
    expected = oracle.expected("masked_attention", Q, K, V, PAD, True)
    reply, what = attention(student, Q, K, V, PAD, True)
    expect_precise(
        reply["value"],
        expected,
        what=what + " in float64",
        mistakes=oracle.mistakes("masked_attention", Q, K, V, PAD, True),
    )
    handle, w = module(student, 5, 3, 6, 2, bias=True, wseed=929)
    what = "CrossAttention(5, 3, 6, n_heads=2, qkv_bias=True) in float64 (x, context float64)"
    with explained(student, what):
        got = handle(X, CTX, PAD, cast=F64)
    expect_precise(
        got,
        oracle.expected("cross_attention", X, CTX, w, 2, PAD),
        what=what,
        mistakes=oracle.mistakes("cross_attention", X, CTX, w, 2, PAD),
    )
