"""Stage 6, public checks: self-attention with query, key and value projections.

The learner's modules are built in their child process (``student.new``); the judge reads or loads their weights
and compares the forward pass with a reference computed from the same weights. Only fixed inputs and weights
here: these expected values are stored for student releases.
"""

import torch

from autograder import oracle
from autograder.checks import check, expect_close, expect_kept, expect_precise, expect_shape, fail
from autograder.graders import attention as a
from autograder.graders.attention import explained, grads_of, linear_weights, new_module, qkv, weight_names
from autograder.graders.inputs import JOURNEY, JOURNEY_QKV_ROW_2, fixed

STAGE = "self_attention"
F64 = torch.float64
NAMES = ("W_query", "W_key", "W_value")
X = fixed(2, 5, 4, seed=61, low=-2.0, high=2.0)  # (B, T, d_in), B differs from every d_out used below
PARAMS_HINT = "Create self.W_query, self.W_key, self.W_value = nn.Parameter(torch.rand(d_in, d_out)), in that order"
LINEAR_HINT = "Create self.W_query, self.W_key, self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)"


def params_weights(d_in, d_out, wseed):
    return {name: fixed(d_in, d_out, seed=wseed + i, low=-1.0, high=1.0) for i, name in enumerate(NAMES)}


def params_module(student, d_in, d_out, weights, dtype=F64):
    """SelfAttentionParams(d_in, d_out) in float64 holding ``weights``."""
    what = f"SelfAttentionParams({d_in}, {d_out})"
    handle = new_module(
        student, "SelfAttentionParams", d_in, d_out, weights=weights, what=what, hint=PARAMS_HINT, dtype=dtype
    )
    return handle


def linear_module(student, d_in, d_out, qkv_bias, weights, dtype=F64):
    what = f"SelfAttentionLinear({d_in}, {d_out}, qkv_bias={qkv_bias})"
    handle = new_module(
        student,
        "SelfAttentionLinear",
        d_in,
        d_out,
        qkv_bias=qkv_bias,
        weights=weights,
        what=what,
        hint=LINEAR_HINT,
        dtype=dtype,
    )
    return handle


def rand_draws(d_in, d_out, manual_seed=123):
    """What torch.manual_seed(manual_seed) followed by three torch.rand(d_in, d_out) gives, in creation order."""
    g = torch.Generator().manual_seed(manual_seed)
    return [torch.rand(d_in, d_out, generator=g) for _ in NAMES]


@check("SelfAttentionParams: W_query, W_key, W_value are nn.Parameter of shape (d_in, d_out)", construction=True)
def test_params_structure(student):
    info = student.new("SelfAttentionParams", 4, 3, seed=123).info
    params = info.get("params", {})
    for name in NAMES:
        if name not in params:
            fail(
                f"SelfAttentionParams(4, 3) has no parameter {name!r} (its parameters: "
                f"{', '.join(sorted(params)) or 'none'}). {PARAMS_HINT}: a tensor that is not wrapped in "
                "nn.Parameter is not trained and not listed by module.parameters()"
            )
        if params[name]["shape"] != [4, 3]:
            fail(
                f"SelfAttentionParams(4, 3).{name} has shape {tuple(params[name]['shape'])}, expected (4, 3) = "
                "(d_in, d_out), so that x (..., T, d_in) @ W gives (..., T, d_out)"
            )
        if not params[name]["requires_grad"]:
            fail(f"SelfAttentionParams(4, 3).{name} does not require grad: keep the default requires_grad=True")


@check(
    "SelfAttentionParams: weights drawn with torch.rand, in the order query, key, value, from the caller's seed",
    construction=True,
)
def test_params_creation_order(student):
    # two seeds: a module that seeds itself inside __init__ (torch.manual_seed(123) copied from the notebooks)
    # reproduces the table at seed 123 only
    for seed in (123, 2024):
        handle = student.new("SelfAttentionParams", 4, 3, seed=seed)
        state = handle.state()
        missing = [n for n in NAMES if n not in state]
        if missing:
            fail(f"SelfAttentionParams(4, 3) has no parameter {missing[0]!r}. {PARAMS_HINT}")
        # the numbers drawn, in the order drawn (flattened: a weight of another shape is the structure check's
        # failure, not this one's)
        got = [state[n].t.to(torch.float32).reshape(-1) for n in NAMES]
        draws = _flat_draws(seed)
        if _same_draws(got, draws):
            continue
        if seed != 123 and _same_draws(got, _flat_draws(123)):
            fail(
                f"after torch.manual_seed({seed}), the weights are those of torch.manual_seed(123): __init__ seeds "
                "the generator itself. Leave seeding to the caller (the notebooks call torch.manual_seed(123) "
                "before building the module), so that each seed gives other weights",
                a.SEEDED_INSIDE,
            )
        for i, name in enumerate(NAMES):
            j = next((j for j, d in enumerate(draws) if _same_draws([got[i]], [d])), None)
            if j is not None and j != i:
                fail(
                    f"after torch.manual_seed({seed}), {name} holds the {('first', 'second', 'third')[j]} "
                    f"torch.rand draw but should hold the {('first', 'second', 'third')[i]}: create W_query, then "
                    "W_key, then W_value, so that the module reproduces the numbers of the notebooks",
                    a.WRONG_ORDER,
                )
        fail(
            f"after torch.manual_seed({seed}), the weights are not the values torch.rand(d_in, d_out) draws "
            f"(W_query starts {got[0].reshape(-1)[:3].tolist()}, expected {draws[0].reshape(-1)[:3].tolist()}). "
            f"{PARAMS_HINT}, and draw nothing else before them",
            a.NOT_RAND,
        )


def _flat_draws(manual_seed: int) -> list:
    """:func:`rand_draws` of SelfAttentionParams(4, 3) after ``torch.manual_seed(manual_seed)``, each flattened."""
    return [d.reshape(-1) for d in rand_draws(4, 3, manual_seed)]


def _same_draws(got, draws) -> bool:
    return all(g.shape == d.shape and torch.equal(g, d) for g, d in zip(got, draws))


@check("SelfAttentionParams: the notebooks' table (manual_seed(123), row 2 = [0.3061, 0.8210])", weight=2)
def test_seed_table(student):
    handle = student.new("SelfAttentionParams", 3, 2, seed=123)
    what = "torch.manual_seed(123); SelfAttentionParams(3, 2)(inputs)"
    with explained(student, what):
        got = expect_shape(handle(JOURNEY, cast=torch.float32), (6, 2), what)
    row = got.t[1].to(F64)
    if bool(((row - JOURNEY_QKV_ROW_2).abs() <= 1e-4).all()):
        return
    state = handle.state()
    draws = [d.to(F64) for d in rand_draws(3, 2)]
    mistake, why = None, ""
    if all(n in state for n in NAMES):
        got_w = [state[n].t.to(F64) for n in NAMES]
        shaped = all(tuple(g.shape) == (3, 2) for g in got_w)
        same = shaped and all(torch.allclose(g, d) for g, d in zip(got_w, draws))
        if not shaped:
            why = " The weights do not have shape (d_in, d_out) = (3, 2): see the structure check."
        elif not same and sorted(tuple(round(v, 6) for v in g.reshape(-1).tolist()) for g in got_w) == sorted(
            tuple(round(v, 6) for v in d.reshape(-1).tolist()) for d in draws
        ):
            mistake, why = (
                a.WRONG_ORDER,
                " The weights hold the right random numbers in the wrong order: create "
                "W_query, then W_key, then W_value.",
            )
        elif same:
            wrong = oracle.mistakes("self_attention_params", JOURNEY, dict(zip(NAMES, draws)))
            for name, out in wrong.items():
                if torch.allclose(out[1], row, atol=1e-4):
                    mistake, why = name, f" This looks like a known mistake: {name}."
                    break
            else:
                why = " The weights are right, so the forward pass differs."
    fail(
        f"{what}: row 2 (index 1) is {[round(v, 4) for v in row.tolist()]}, the notebooks print [0.3061, 0.8210].{why}",
        mistake,
    )


@check("SelfAttentionParams: values against the reference with the same weights", weight=2)
def test_params_values(student):
    w = params_weights(4, 3, wseed=62)
    handle = params_module(student, 4, 3, w)
    what = "SelfAttentionParams(4, 3)(x (2, 5, 4))"
    with explained(student, what):
        got = handle(X, cast=F64)
    expect_close(
        got,
        oracle.expected("self_attention_params", X, w),
        what=what,
        mistakes=oracle.mistakes("self_attention_params", X, w),
    )


@check(
    "SelfAttentionLinear: W_query, W_key, W_value are nn.Linear(d_in, d_out), with a bias only when qkv_bias",
    construction=True,
)
def test_linear_structure(student):
    for bias in (False, True):
        info = student.new("SelfAttentionLinear", 4, 3, qkv_bias=bias, seed=123).info
        a.expect_structure(
            info, linears={n: (4, 3, bias) for n in NAMES}, what=f"SelfAttentionLinear(4, 3, qkv_bias={bias})"
        )


@check("SelfAttentionLinear: values against the reference (qkv_bias False and True)", weight=2)
def test_linear_values(student):
    for bias, d_out in ((False, 3), (True, 5)):
        w = linear_weights(qkv(4, d_out), bias=bias, seed=63 + d_out, bias_values=True)  # the biases' one check
        handle = linear_module(student, 4, d_out, bias, w)
        w = handle.held
        what = f"SelfAttentionLinear(4, {d_out}, qkv_bias={bias})(x (2, 5, 4))"
        with explained(student, what):
            got = handle(X, cast=F64)
        expect_close(
            got,
            oracle.expected("self_attention_linear", X, w),
            what=what,
            mistakes=oracle.mistakes("self_attention_linear", X, w),
        )


@check("scores scaled by 1/sqrt(d_out), no mask")
def test_scale_and_no_mask(student):
    # d_in = 9 and d_out = 2 make every wrong scale visible; T = 6 differs from both
    x = fixed(2, 6, 9, seed=64, low=-1.5, high=1.5)
    w = params_weights(9, 2, wseed=65)
    handle = params_module(student, 9, 2, w)
    what = "SelfAttentionParams(9, 2)(x (2, 6, 9))"
    with explained(student, what):
        got = handle(x, cast=F64)
    expect_close(
        got,
        oracle.expected("self_attention_params", x, w),
        what=what + ": divide the scores by "
        "sqrt(d_out) = sqrt(2), the size of a key, and let every step attend to every step",
        mistakes=oracle.mistakes("self_attention_params", x, w),
    )


@check("gradients reach W_query, W_key and W_value and equal the reference", weight=2)
def test_gradients(student):
    up = fixed(2, 5, 3, seed=66)
    w = params_weights(4, 3, wseed=67)
    handle = params_module(student, 4, 3, w)
    what = "SelfAttentionParams(4, 3): backward of sum(out * u)"
    with explained(student, what):
        grads = grads_of(handle(X, cast=F64, upstream=up, full=True), NAMES, what, up)
    for name in NAMES:
        expect_close(
            grads[name],
            oracle.expected("self_attention_params_grad", name, X, up, w),
            what=f"{what}: gradient of {name}",
        )
    w = linear_weights(qkv(4, 3), bias=True, seed=68)
    handle = linear_module(student, 4, 3, True, w)
    w = handle.held
    what = "SelfAttentionLinear(4, 3, qkv_bias=True): backward of sum(out * u)"
    with explained(student, what):
        grads = grads_of(handle(X, cast=F64, upstream=up, full=True), weight_names(w), what, up)
    for name in weight_names(w):
        expect_close(
            grads[name],
            oracle.expected("self_attention_linear_grad", name, X, up, w),
            what=f"{what}: gradient of {name}",
        )


@check("one sequence (T, d_in) and extra leading dims (..., T, d_in), both modules")
def test_leading_dims(student):
    w_params, w_linear = params_weights(4, 3, wseed=69), linear_weights(qkv(4, 3), bias=True, seed=72)
    for cls, handle, key, w in (
        ("SelfAttentionParams", params_module(student, 4, 3, w_params), "self_attention_params", w_params),
        ("SelfAttentionLinear", linear_module(student, 4, 3, True, w_linear), "self_attention_linear", w_linear),
    ):
        w = handle.held
        for shape in ((5, 4), (2, 3, 5, 4)):
            x = fixed(*shape, seed=70 + len(shape), low=-2.0, high=2.0)
            what = f"{cls}(4, 3)(x {shape})"
            with explained(student, what):
                got = expect_shape(handle(x, cast=F64), shape[:-1] + (3,), what)
            expect_close(got, oracle.expected(key, x, w), what=what, mistakes=oracle.mistakes(key, x, w))


@check("input unchanged (one sequence (T, d_in) too), dtype and device kept")
def test_meta(student, device):
    dtypes = (torch.float32,) if device == "mps" else (torch.float32, F64)
    w_params, w_linear = params_weights(4, 3, wseed=96), linear_weights(qkv(4, 3), bias=False, seed=97)
    for cls, handle, key, w in (
        ("SelfAttentionParams", params_module(student, 4, 3, w_params), "self_attention_params", w_params),
        ("SelfAttentionLinear", linear_module(student, 4, 3, False, w_linear), "self_attention_linear", w_linear),
    ):
        w = handle.held
        # (B, T, d_in) in each dtype, and one sequence (T, d_in): x.unsqueeze_(0) would change the caller's x
        for x, dtype in [(X, dtype) for dtype in dtypes] + [(X[0], torch.float32)]:
            handle.to(device, dtype)
            what = f"{cls}(4, 3)(x {tuple(x.shape)} {str(dtype)[6:]} on {device})"
            with explained(student, what):
                reply = handle(x, to=device, cast=dtype, full=True, return_inputs=True)
            expected = oracle.expected(key, x, w)
            expect_kept(reply, what, expected, shape=tuple(x.shape[:-1]) + (3,), dtype=dtype, device=device)


@check("keeps the input's precision (float64 in, float64 accuracy out)")
def test_precision(student):
    w_params, w_linear = params_weights(4, 3, wseed=98), linear_weights(qkv(4, 3), bias=True, seed=99)
    for cls, handle, key, w in (
        ("SelfAttentionParams", params_module(student, 4, 3, w_params), "self_attention_params", w_params),
        ("SelfAttentionLinear", linear_module(student, 4, 3, True, w_linear), "self_attention_linear", w_linear),
    ):
        w = handle.held
        what = f"{cls}(4, 3) in float64 (x float64)"
        with explained(student, what):
            got = handle(X, cast=F64)
        expect_precise(got, oracle.expected(key, X, w), what=what, mistakes=oracle.mistakes(key, X, w))
