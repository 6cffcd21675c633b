"""Stage 8, public checks: head split and merge, multi-head attention against PyTorch's own.

Expected values: the oracle's references (float64, CPU), ``F.scaled_dot_product_attention`` on every head and a
``torch.nn.MultiheadAttention`` given the learner's weights, both computed here in the judge. Fixed inputs only.
"""

import torch
import torch.nn.functional as F

from autograder import oracle
from autograder.checks import check, expect_close, expect_kept, expect_precise, expect_shape, fail
from autograder.graders import attention as a
from autograder.graders.attention import (
    biased,
    expect_causal,
    expect_close_by_hand,
    explained,
    grads_of,
    linear_weights,
    mha_layers,
    new_module,
    by_hand_module,
    perturb_from,
    require_by_hand,
    sdpa,
    weight_names,
)
from autograder.graders.inputs import fixed
from autograder.sandbox.values import Call
from autograder.sandbox.errors import MissingName, StudentCodeError, SubmissionLoadError, raised_a

STAGE = "multi_head_attention"
F64 = torch.float64
HINT = (
    "Create self.W_query, self.W_key, self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias) and "
    "self.out_proj = nn.Linear(d_out, d_out)"
)
XS = fixed(2, 5, 6, seed=101)  # (B, T, C) for split_heads
HS = fixed(2, 3, 5, 2, seed=102)  # (B, nh, T, hs) for merge_heads
X = fixed(2, 8, 4, seed=103, low=-2, high=2)  # (B, T = context_length, d_in)


layers = mha_layers


def module(
    student,
    d_in,
    d_out,
    nh,
    L=8,
    *,
    bias=False,
    wseed=104,
    dtype=F64,
    weights=None,
    dropout=0.0,
    hint=HINT,
    bias_values=False,
):
    """MultiHeadAttention(d_in, d_out, nh, L) in ``dtype`` holding ``weights`` (default: fixed ones from ``wseed``,
    zero biases unless ``bias_values``, see :func:`linear_weights`); returns (handle, weights)."""
    w = (
        weights
        if weights is not None
        else linear_weights(layers(d_in, d_out), bias=biased(bias), seed=wseed, bias_values=bias_values)
    )
    handle = new_module(
        student,
        "MultiHeadAttention",
        d_in,
        d_out,
        nh,
        L,
        dropout=dropout,
        qkv_bias=bias,
        weights=w,
        what=f"MultiHeadAttention({d_in}, {d_out}, n_heads={nh}, context_length={L}, qkv_bias={bias})",
        hint=hint,
        dtype=dtype,
    )
    return handle, handle.held


def heads_of(x, w, nh):
    """Queries, keys and values of every head, (B, nh, T, hs), by slicing the rows of each weight matrix."""

    def project(name):
        weight, bias = w[f"{name}.weight"], w.get(f"{name}.bias")
        hs = weight.shape[0] // nh
        return torch.stack(
            [
                F.linear(x, weight[h * hs : (h + 1) * hs], None if bias is None else bias[h * hs : (h + 1) * hs])
                for h in range(nh)
            ],
            dim=1,
        )

    return project("W_query"), project("W_key"), project("W_value")


def torch_mha(x, w, nh):
    """torch.nn.MultiheadAttention with the same weights and a causal mask (trusted, float64)."""
    d = w["out_proj.weight"].shape[0]
    mha = torch.nn.MultiheadAttention(d, nh, bias=True, batch_first=True, dtype=F64)
    zeros = torch.zeros(d, dtype=F64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([w["W_query.weight"], w["W_key.weight"], w["W_value.weight"]]))
        mha.in_proj_bias.copy_(torch.cat([w.get(f"{n}.bias", zeros) for n in ("W_query", "W_key", "W_value")]))
        mha.out_proj.weight.copy_(w["out_proj.weight"])
        mha.out_proj.bias.copy_(w.get("out_proj.bias", zeros))
        T = x.shape[-2]
        future = torch.ones(T, T, dtype=torch.bool).triu(1)  # True = may not attend
        return mha.eval()(x, x, x, attn_mask=future, need_weights=False)[0]


def mha_values(student, handle, w, x, nh, what, record=True):
    with explained(student, what):  # one recorded call per check: tracing and replaying it costs tens of ms
        reply = handle(
            x, cast=F64, full=True, record=record and (lambda x: oracle.expected("multi_head_attention", x, w, nh))
        )
    expect_close_by_hand(
        reply,
        oracle.expected("multi_head_attention", x, w, nh),
        what=what,
        mistakes=oracle.mistakes("multi_head_attention", x, w, nh, context_length=8),
    )


# ───────────────────────────── split_heads / merge_heads ─────────────────────────────


@check("split_heads: (B, T, C) -> (B, nh, T, C // nh), head h holds features h*hs .. (h+1)*hs - 1", weight=2)
def test_split(student):
    heads = (1, 2, 3)
    answers = iter(student.call_all(Call("split_heads", XS, nh, cast=F64) for nh in heads))
    for nh in heads:
        what = f"split_heads(x (2, 5, 6), {nh})"
        with explained(student, what):
            got = expect_shape(next(answers), (2, nh, 5, 6 // nh), what)
        expect_close(
            got, oracle.expected("split_heads", XS, nh), what=what, mistakes=oracle.mistakes("split_heads", XS, nh)
        )


@check("merge_heads: (B, nh, T, hs) -> (B, T, nh * hs)", weight=2)
def test_merge(student):
    inputs = (HS, HS[:, :1].clone())
    answers = iter(student.call_all(Call("merge_heads", h, cast=F64) for h in inputs))
    for h in inputs:
        what = f"merge_heads(x {tuple(h.shape)})"
        with explained(student, what):
            got = expect_shape(next(answers), (2, 5, h.shape[1] * 2), what)
        expect_close(got, oracle.expected("merge_heads", h), what=what, mistakes=oracle.mistakes("merge_heads", h))


@check("merge_heads(split_heads(x, nh)) gives x back (round trip)")
def test_round_trip(student):
    for nh in (2, 3):
        what = f"merge_heads(split_heads(x (2, 5, 6), {nh}))"
        with explained(student, what):
            heads = expect_shape(student.call("split_heads", XS, nh, cast=F64), (2, nh, 5, 6 // nh), what)
            back = student.call("merge_heads", heads.t, cast=F64)
        expect_close(back, XS, what=what + " should equal x: merge_heads must undo split_heads exactly")


@check("split/merge: inputs unchanged, non-contiguous inputs, dtype and device kept")
def test_split_merge_meta(student, device):
    for name, arg, args, shape, expected in (
        ("split_heads", XS, (XS, 3), (2, 3, 5, 2), oracle.expected("split_heads", XS, 3)),
        ("merge_heads", HS, (HS,), (2, 5, 6), oracle.expected("merge_heads", HS)),
    ):
        what = f"{name}(x {tuple(arg.shape)}, non-contiguous float32 on {device})"
        with explained(student, what):
            reply = student.call(
                name, *args, to=device, cast=torch.float32, noncontig=True, full=True, return_inputs=True
            )
        known = oracle.mistakes(name, *args)
        expect_kept(reply, what, expected, shape=shape, dtype=torch.float32, device=device, mistakes=known)


# ───────────────────────────── MultiHeadAttention ─────────────────────────────


@check("MultiHeadAttention: ValueError when d_out % n_heads != 0", construction=True)
def test_value_error(student):
    try:
        student.new("MultiHeadAttention", 4, 6, 4, 8, seed=123)
    except (MissingName, SubmissionLoadError):
        raise
    except StudentCodeError as exc:
        if not raised_a(exc.error, "ValueError"):
            fail(
                f"MultiHeadAttention(4, d_out=6, n_heads=4, context_length=8) raised {exc.error.get('type')}, expected a "
                "ValueError: `if d_out % n_heads != 0: raise ValueError(...)` (an assert can be switched off, and "
                "says nothing to the caller)",
                a.NO_VALUE_ERROR,
            )
    else:
        fail(
            "MultiHeadAttention(4, d_out=6, n_heads=4, context_length=8) was created without complaint, but 6 features cannot be "
            "split into 4 equal heads: raise ValueError in __init__ when d_out % n_heads != 0, with a message "
            "that shows both numbers",
            a.NO_VALUE_ERROR,
        )
    student.new("MultiHeadAttention", 4, 6, 3, 8, seed=123)  # and a valid one is accepted


@check(
    "MultiHeadAttention: W_query, W_key, W_value are nn.Linear(d_in, d_out), out_proj is nn.Linear(d_out, d_out), "
    "an nn.Dropout, the mask a registered bool buffer",
    construction=True,
)
def test_structure(student):
    for bias in (False, True):
        handle = student.new("MultiHeadAttention", 4, 6, 2, 8, qkv_bias=bias, seed=123)
        a.expect_structure(
            handle.info,
            linears={"W_query": (4, 6, bias), "W_key": (4, 6, bias), "W_value": (4, 6, bias), "out_proj": (6, 6, True)},
            dropout=True,
            mask=8,
            what=f"MultiHeadAttention(4, 6, n_heads=2, context_length=8, qkv_bias={bias})",
            state=handle.state() if "mask" in handle.info.get("buffers", {}) else None,
        )


@check("MultiHeadAttention: values with the same weights (nh = 1 and nh > 1, T < context_length, bias)", weight=2)
def test_values(student):
    for nh, T, bias in ((1, 8, False), (3, 5, False), (2, 8, True)):
        handle, w = module(student, 4, 6, nh, bias=bias, wseed=105 + nh, bias_values=True)  # the biases' check
        x = X[:, :T].clone()
        mha_values(
            student,
            handle,
            w,
            x,
            nh,
            f"MultiHeadAttention(4, 6, n_heads={nh}, context_length=8, qkv_bias={bias})(x (2, {T}, 4))",
            record=nh == 3,
        )


@check("MultiHeadAttention: each head equals single-head causal attention on its slice", weight=2)
def test_each_head(student):
    nh, hs = 3, 2
    w = linear_weights(layers(4, 6), bias={"out_proj"}, seed=110)
    w["out_proj.weight"], w["out_proj.bias"] = torch.eye(6, dtype=F64), torch.zeros(6, dtype=F64)
    handle, w = module(student, 4, 6, nh, weights=w)
    what = "MultiHeadAttention(4, 6, n_heads=3, context_length=8) with out_proj = identity"
    with explained(student, what):
        reply = handle(X, cast=F64, record=lambda x: oracle.expected("multi_head_attention", x, w, nh), full=True)
    require_by_hand(reply, what)
    got = expect_shape(reply["value"], (2, 8, 6), what).t
    q, k, v = heads_of(X, w, nh)
    wrong = oracle.mistakes("multi_head_attention", X, w, nh, context_length=8)
    for h in range(nh):
        expect_close(
            got[..., h * hs : (h + 1) * hs],
            oracle.expected("causal_attention", q[:, h], k[:, h], v[:, h]),
            what=f"{what}: features {h * hs}..{(h + 1) * hs - 1} (head {h}) should be causal attention of "
            f"head {h}'s own queries, keys and values (rows {h * hs}..{(h + 1) * hs - 1} of each W)",
            mistakes={n: o[..., h * hs : (h + 1) * hs] for n, o in wrong.items()},
        )


@check("MultiHeadAttention: every head matches scaled_dot_product_attention")
def test_sdpa_per_head(student):
    nh = 4
    handle, w = module(student, 4, 8, nh, bias=True, wseed=111)
    # T = 7: no other size of this module (a scale by sqrt(T) is then told from one by sqrt(d_out))
    x = X[:, :7].contiguous()
    q, k, v = heads_of(x, w, nh)
    heads = sdpa(q, k, v)  # (B, nh, T, hs)
    expected = F.linear(torch.cat(heads.unbind(1), dim=-1), w["out_proj.weight"], w.get("out_proj.bias"))
    what = "MultiHeadAttention(4, 8, n_heads=4, context_length=8, qkv_bias=True)(x (2, 7, 4))"
    with explained(student, what):
        reply = handle(x, cast=F64, record=lambda x: oracle.expected("multi_head_attention", x, w, nh), full=True)
    expect_close_by_hand(
        reply,
        expected,
        what=what + ", compared with F.scaled_dot_product_attention on each head",
        mistakes=oracle.mistakes("multi_head_attention", x, w, nh, context_length=8),
    )


@check("MultiHeadAttention: equals torch.nn.MultiheadAttention with the same weights and a causal mask", weight=2)
def test_torch_mha(student):
    x = fixed(2, 7, 6, seed=112, low=-2, high=2)
    for nh, bias in ((2, True), (3, False)):
        handle, w = module(student, 6, 6, nh, bias=bias, wseed=113 + nh)
        what = f"MultiHeadAttention(6, 6, n_heads={nh}, context_length=8, qkv_bias={bias})(x (2, 7, 6))"
        with explained(student, what):
            reply = handle(x, cast=F64, record=nh == 2 and (lambda x, w=w, nh=nh: torch_mha(x, w, nh)), full=True)
        expect_close_by_hand(
            reply,
            torch_mha(x, w, nh),
            what=what + ", compared with nn.MultiheadAttention",
            mistakes=oracle.mistakes("multi_head_attention", x, w, nh, context_length=8),
        )


@check(
    "written by hand: no nn.MultiheadAttention, multi_head_attention_forward or scaled_dot_product_attention", weight=3
)
def test_by_hand(student):
    w = linear_weights(layers(4, 6), bias=biased(False), seed=199)
    what = "MultiHeadAttention(4, 6, 2, 8)"
    handle, reference = by_hand_module(
        student, "MultiHeadAttention", (4, 6, 2, 8), w, "multi_head_attention", 2, what=what
    )
    with explained(student, f"{what}(x)"):
        reply = handle(X, cast=torch.float32, record=reference, full=True)
    require_by_hand(reply, "MultiHeadAttention.forward", reference(X))


@check("MultiHeadAttention: gradients reach W_query, W_key, W_value and out_proj and equal the reference")
def test_gradients(student):
    handle, w = module(student, 4, 6, 2, wseed=116)
    up = fixed(2, 8, 6, seed=117)
    what = "MultiHeadAttention(4, 6, n_heads=2, context_length=8): backward of sum(out * u)"
    with explained(student, what):
        grads = grads_of(handle(X, cast=F64, upstream=up, full=True), weight_names(w), what, up)
    for name in weight_names(w):
        expect_close(
            grads[name],
            oracle.expected("multi_head_attention_grad", name, X, up, w, 2),
            what=f"{what}: gradient of {name}",
        )


@check("MultiHeadAttention: changing a future step of x never changes an earlier output")
def test_causality(student):
    handle, w = module(student, 4, 6, 2, wseed=118)
    what = "MultiHeadAttention(4, 6, n_heads=2, context_length=8)(x (2, 8, 4))"
    with explained(student, what):
        base = handle(X, cast=F64)
        after = handle(perturb_from(X, 4, seed=119), cast=F64)
    expect_causal(
        base,
        after,
        4,
        what=what,
        changed_what="x",
        expected=oracle.expected("multi_head_attention", X, w, 2),
        mistakes=oracle.mistakes("multi_head_attention", X, w, 2, context_length=8),
    )


@check("MultiHeadAttention: input unchanged, dtype and device kept")
def test_meta(student, device):
    handle, w = module(student, 4, 6, 2, wseed=121)
    expected = oracle.expected("multi_head_attention", X[:, :6], w, 2)
    for dtype in (torch.float32,) if device == "mps" else (torch.float32, F64):
        handle.to(device, dtype)
        what = f"MultiHeadAttention(4, 6, 2, 8)(x {str(dtype)[6:]} on {device})"
        with explained(student, what):
            reply = handle(X[:, :6], to=device, cast=dtype, full=True, return_inputs=True)
        expect_kept(reply, what, expected, shape=(2, 6, 6), dtype=dtype, device=device)


@check("keeps the input's precision (float64 in, float64 accuracy out)")
def test_precision(student):
    handle, w = module(student, 4, 6, 3, bias=True, wseed=122)
    what = "MultiHeadAttention(4, 6, n_heads=3, context_length=8, qkv_bias=True) in float64 (x float64)"
    with explained(student, what):
        got = handle(X, cast=F64)
    expect_precise(
        got,
        oracle.expected("multi_head_attention", X, w, 3),
        what=what,
        mistakes=oracle.mistakes("multi_head_attention", X, w, 3, context_length=8),
    )
