"""Stage 6, hidden checks: random weights and inputs (seeded per result), odd shapes, every device."""

import torch

from autograder import oracle
from autograder.checks import HALVES, check, expect_close, expect_half
from autograder.graders.attention import explained, grads_of, new_module, qkv, random_linear_weights, weight_names
from autograder.graders.inputs import randn, rounded

STAGE = "self_attention"
F64 = torch.float64
NAMES = ("W_query", "W_key", "W_value")


def _params(student, rng, d_in, d_out, dtype=F64):
    w = {n: randn(rng, d_in, d_out) / d_in**0.5 * 1.5 for n in NAMES}
    handle = new_module(
        student,
        "SelfAttentionParams",
        d_in,
        d_out,
        weights=w,
        what=f"SelfAttentionParams({d_in}, {d_out})",
        dtype=dtype,
    )
    return handle, handle.held


def _linear(student, rng, d_in, d_out, bias, dtype=F64):
    w = random_linear_weights(rng, qkv(d_in, d_out), bias=bias)
    handle = new_module(
        student,
        "SelfAttentionLinear",
        d_in,
        d_out,
        qkv_bias=bias,
        weights=w,
        what=f"SelfAttentionLinear({d_in}, {d_out}, qkv_bias={bias})",
        dtype=dtype,
    )
    return handle, handle.held


@check("random weights and inputs, varied shapes (T = 1, d_in != d_out and d_in == d_out, B > 1)", weight=2)
def test_random(student, rng):
    # T = 1 last: with one step, mistakes cannot be told apart (a label there would guess)
    # d_in == d_out once: a projection skipped, or a residual added, only when the sizes allow it shows there
    cases = [
        ((3, 7, 5), 2, True),
        ((4, 6, 2), 6, False),
        ((2, 2, 4, 3), 4, True),
        ((2, 5, 4), 4, False),
        ((1, 1, 3), 2, False),
    ]
    for shape, d_out, bias in cases:
        x = randn(rng, *shape) * 1.5
        for cls in ("SelfAttentionParams", "SelfAttentionLinear"):
            if cls == "SelfAttentionParams":
                handle, w = _params(student, rng, shape[-1], d_out)
                key = "self_attention_params"
            else:
                handle, w = _linear(student, rng, shape[-1], d_out, bias)
                key = "self_attention_linear"
            what = f"{cls}({shape[-1]}, {d_out})(x {shape})"
            with explained(student, what):
                got = handle(x, cast=F64)
            expect_close(got, oracle.expected(key, x, w), what=what, mistakes=oracle.mistakes(key, x, w))


@check("gradients on random inputs (SelfAttentionLinear with qkv_bias=True)")
def test_random_gradients(student, rng):
    x, up = randn(rng, 3, 4, 5), randn(rng, 3, 4, 2)
    handle, w = _linear(student, rng, 5, 2, True)
    what = "SelfAttentionLinear(5, 2, qkv_bias=True): backward of sum(out * u)"
    with explained(student, what):
        grads = grads_of(handle(x, cast=F64, upstream=up, full=True), weight_names(w), what, up)
    for name in weight_names(w):
        expect_close(
            grads[name],
            oracle.expected("self_attention_linear_grad", name, x, up, w),
            what=f"{what}: gradient of {name}",
        )


@check("non-contiguous input with two leading dims, every device")
def test_noncontig_devices(student, rng, device):
    x = randn(rng, 2, 3, 6, 4)
    for cls in ("SelfAttentionParams", "SelfAttentionLinear"):
        if cls == "SelfAttentionParams":
            handle, w = _params(student, rng, 4, 3, dtype=torch.float32)
            key = "self_attention_params"
        else:
            handle, w = _linear(student, rng, 4, 3, False, dtype=torch.float32)
            key = "self_attention_linear"
        handle.to(device, torch.float32)
        what = f"{cls}(4, 3)(x (2, 3, 6, 4) non-contiguous, float32 on {device})"
        with explained(student, what):
            got = handle(x, to=device, cast=torch.float32, noncontig=True)
        expect_close(got, oracle.expected(key, x, w), what=what, mistakes=oracle.mistakes(key, x, w))


@check("float16 and bfloat16 modules and inputs (CPU)")
def test_half(student, rng):
    x = randn(rng, 2, 5, 4)
    for dtype in HALVES:
        for cls, key in (
            ("SelfAttentionParams", "self_attention_params"),
            ("SelfAttentionLinear", "self_attention_linear"),
        ):
            if cls == "SelfAttentionParams":
                handle, w = _params(student, rng, 4, 3, dtype=dtype)
            else:
                handle, w = _linear(student, rng, 4, 3, True, dtype=dtype)
            wh, xh = {n: rounded(v, dtype) for n, v in w.items()}, rounded(x, dtype)
            what = f"{cls}(4, 3) in {str(dtype)[6:]} (x {str(dtype)[6:]})"
            with explained(student, what):
                got = handle(xh, cast=dtype)
            expect_half(got, oracle.expected(key, xh, wh), dtype, what=what, mistakes=oracle.mistakes(key, xh, wh))
