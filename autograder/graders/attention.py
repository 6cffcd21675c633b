"""What the graders of the attention stages (6 to 8) share: the names of the mistakes they recognise, modules
loaded with known weights, the "written by hand" rule, causality measured from arrays, and learner errors that
point at a known mistake.

Everything here runs in the judge and only looks at values that came back from the learner's child process.
It ships with the public graders (no reference code in it): expected values come from :mod:`autograder.oracle`
or from PyTorch's own implementations, computed here on the CPU in float64.
"""

from __future__ import annotations

import re

import torch

from autograder.checks import as_tensor, diagnose, error_line, expect_shape, fail, tolerance, uses_dot_T
from autograder.graders.inputs import fixed
from autograder.sandbox.values import Out
from autograder.sandbox.errors import MissingName, StudentCodeError, SubmissionLoadError, learner_error

# ───────────────────────────── mistake names (the oracles use the same strings) ─────────────────────────────

MISSING_SCALE = "missing scale (not divided by sqrt(d_k); d_k ** (1 // 2) is d_k ** 0 = 1: use math.sqrt(d_k))"
SCALE_NO_SQRT = "scaled by d_k instead of sqrt(d_k)"
SCALE_D_IN = "scaled by sqrt(d_in) instead of sqrt(d_out)"
SCALE_T = "scaled by sqrt(T) instead of sqrt(d_k)"
# a module knows context_length too; where T == context_length the two give the same numbers
SCALE_STEPS = "scaled by the square root of the sequence length (T, or context_length) instead of sqrt(d_k)"
SCALE_HS_V = "scaled by sqrt(hs_v) (the value size) instead of sqrt(hs)"
SCALE_D_OUT = "scaled by sqrt(d_out) instead of sqrt(head_size)"
SCALE_D_OUT_OVER_HEADS = (
    "scaled by sqrt(d_out) / n_heads instead of sqrt(d_out / n_heads) (the head size's square root: "
    "divide inside the sqrt)"
)
SCALE_D_OUT_TIMES_HEADS = "scaled by sqrt(d_out) * n_heads (scores / sqrt(d_out) / n_heads) instead of sqrt(head_size)"
SCALE_BLOCK = "scaled by sqrt(block_size) instead of sqrt(hs)"
SCALE_HS_NO_SQRT = "scaled by head_size instead of sqrt(head_size)"
SCALE_D_IN_HEADS = "scaled by sqrt(d_in) instead of sqrt(head_size)"
SCALE_N_HEADS = "scaled by sqrt(n_heads) instead of sqrt(head_size)"
SCALE_HS_FROM_D_IN = "head size taken from d_in (scaled by sqrt(d_in // n_heads) instead of sqrt(d_out // n_heads))"
SCALE_TIMES = "multiplied by sqrt(d_k) instead of divided"  # stage 5's words too (variance_scaling.TIMES)
FLOOR_DIVIDED = "scores floor-divided by the scale (// rounds every scaled score down to a whole number): divide with /"
QK_SWAPPED = (
    "keys and queries swapped (k @ q^T is the scores transposed: row t holds key t against every query); "
    "use q @ k.transpose(-2, -1)"
)
SOFTMAX_DIM = "softmax over the wrong dim (columns sum to 1, not rows)"
SOFTMAX_OVER_HEADS = "softmax over the heads (dim=1) instead of the keys (dim=-1)"
SCALE_AFTER_SOFTMAX = "scale applied after the softmax (the weights divided by sqrt(d_k): rows no longer sum to 1)"
WRONG_ORDER = "W_query, W_key, W_value created in the wrong order"
NOT_RAND = "weights not drawn with torch.rand"
SEEDED_INSIDE = "__init__ calls torch.manual_seed itself"
MASK_IN_STAGE_6 = "causal mask applied (stage 6 attends to the whole sequence)"
X_T = "x.T on batched input (reverses every dim; use x.transpose(-2, -1))"
# named by what the answer shows: the same numbers come from a mask sliced from the wrong rows (self.mask[-T:])
NO_MASK = "no causal mask, or one that hides nothing (rows taken from its end, self.mask[-T:]): the future leaks in"
# what a causality failure says when no known mistake explains the answer: true of every mask that leaks
FUTURE_LEAKS = "the future leaks in: no causal mask, or one that hides too little"
MASK_AFTER_SOFTMAX = "mask applied after softmax (the future still counts in the normalisation)"
ZERO_NOT_INF = "masked with 0 instead of -inf (the future still gets weight)"
INVERTED_MASK = "inverted mask (the future visible, the past hidden)"
FUTURE_BUFFER = "mask buffer True on the future (s > t) instead of on the visible steps"
UPPER_TRIANGLE = "upper instead of lower triangle (torch.triu)"
OFF_BY_ONE_HIDDEN = "diagonal masked too (a step cannot see itself)"
# a buffer of context_length L sliced to T < L from a wrong corner (the top-left mask[:T, :T] is the causal one)
MASK_TOP_RIGHT = (
    "mask sliced from the buffer's top-right corner (self.mask[:T, -T:]): where T < context_length it hides the "
    "step itself and earlier steps too; slice the top-left corner, self.mask[:T, :T]"
)
MASK_BOTTOM_LEFT = (
    "mask sliced from the buffer's bottom-left corner (self.mask[-T:, :T]): where T < context_length future steps "
    "are visible; slice the top-left corner, self.mask[:T, :T]"
)
OFF_BY_ONE_VISIBLE = "off-by-one mask (one future step visible: tril(diagonal=1), or mask rows one step late)"
MASK_NOT_BUFFER = "mask not registered as a buffer"
NOT_SLICED = "mask not sliced to T (use self.mask[:T, :T])"
SDPA_CALLED = "calls scaled_dot_product_attention (must be written by hand)"
MHA_CALLED = "calls nn.MultiheadAttention (must be written by hand)"
TORCH_CODE_CALLED = "runs torch's own attention code (must be written by hand)"
# the node the recorder adds where torch's own attention code ran (runtime.fused.TORCH_CODE_MARK; graders do not
# import the sandbox's runtime, and tests/test_labels.py checks that the two names agree)
TORCH_CODE_MARK = "autograder.torch_attention_code"
DROPOUT_OUTPUT = "dropout on the output (instead of the attention weights)"
DROPOUT_UNUSED = "dropout not applied in training mode"
# what a module whose out_proj lacks its bias (or has one switched by qkv_bias) is told
OUT_PROJ_BIAS = (
    "create out_proj as nn.Linear(d_out, d_out), with the default bias=True (qkv_bias is for W_query, W_key and "
    "W_value only)"
)
SPLIT_NO_TRANSPOSE = "heads split without transpose (view(B, nh, T, hs))"
SPLIT_MERGE_NO_TRANSPOSE = "heads split and merged without transpose"
MERGE_NO_TRANSPOSE = "merge without transpose ((B, nh, T, hs) viewed straight as (B, T, C))"
INTERLEAVED_HEADS = "features interleaved across heads (view(B, T, hs, nh))"
MISSING_OUT_PROJ = "missing out_proj (the heads are never mixed)"
NO_VALUE_ERROR = "no ValueError when d_out % n_heads != 0"
NO_BIAS_SWITCH = "qkv_bias ignored"
BIAS_NOT_ADDED = "biases not added (x @ W.weight.T instead of calling the nn.Linear layer)"

F64 = torch.float64


# ───────────────────────────── learner errors that point at a mistake ─────────────────────────────


def unsliced_mask(code: str) -> bool:
    """The line reads the mask buffer without cutting both its dims to T: ``self.mask`` whole, or ``self.mask[:T]``
    (rows only). ``self.mask[:T, :T]`` and ``self.mask[:T][:, :T]`` are sliced: an error on such a line has another
    cause (an extra dimension, say)."""
    for found in re.finditer(r"self\.mask\s*(\[([^\]]*)\](\s*\[)?)?", code):
        if found.group(1) is None or ("," not in found.group(2) and found.group(3) is None):
            return True
    return False


def _explain_error(error: dict, source: str = "") -> tuple[str | None, str | None]:
    code = error_line(error, source)
    message = error.get("message") or ""
    if uses_dot_T(code, on_weights=False) or "`x.T`" in message:
        return (
            "`.T` reverses every dimension of a batched tensor; to swap only the last two (T and the "
            "features) use .transpose(-2, -1)",
            X_T,
        )
    if "view size is not compatible" in message:
        return (
            "the data is out of order in memory (after a transpose, or in an input that is not contiguous), so "
            ".view cannot regroup it: use .reshape(...) or .contiguous().view(...)",
            None,
        )
    if unsliced_mask(code) and "must match the size of tensor" in message:  # the buffer of stages 7, 8, 11
        return (
            "the mask is built for context_length steps, but this input has fewer: use the top-left "
            "corner self.mask[:T, :T] with T = x.shape[1]",
            NOT_SLICED,
        )
    if "Sizes of tensors must match except in dimension" in message:
        return (
            "torch.cat joins tensors along the dim it is given, and every other dim must agree: check that it joins "
            "along the dim that grows (time: dim -2 of keys and values split into heads, (B, nh, T, hs))",
            None,
        )
    if "must match the size of tensor" in message or "cannot be multiplied" in message:
        return (
            "the shapes do not line up: write the shape of every tensor next to each line, e.g. "
            "(B, T, d_in) @ (d_in, d_out) -> (B, T, d_out)",
            None,
        )
    if "without overflow" in message and ("Half" in message or "BFloat16" in message):
        return (
            "a number too large for half precision (float16 holds at most 65504, so a fill of -1e9 overflows): fill "
            "with float('-inf'), which every float dtype holds, or with torch.finfo(scores.dtype).min",
            None,
        )
    if DTYPE_CLASH.search(message):
        return (
            "two tensors of different dtypes met in one operation: a tensor made in a fixed dtype "
            "(dtype=torch.float32, .float(), .double(), softmax(..., dtype=...)) must be made with dtype=x.dtype, "
            "or cast back with .to(x.dtype)",
            None,
        )
    return None, None


# torch's messages when an op gets tensors of two dtypes (matmul, linear, addmm, bmm, ...)
DTYPE_CLASH = re.compile(
    r"expected scalar type \w+ but found \w+|expected (both operands|mat1 and mat2|m1 and m2) to have the same "
    r"dtype|to have the same dtype|should be the same dtype|must have the same dtype"
)


class explained:
    """``with explained(student, what):`` turns an error raised by the learner's code into a failure that says what
    was being done (``what``: the steps before the call, such as the appends to a cache) and, when the error is a
    known one, explains it."""

    def __init__(self, student, what: str):
        self.source = getattr(student, "source", "") or ""
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if not isinstance(exc, StudentCodeError) or isinstance(exc, (MissingName, SubmissionLoadError)):
            return False
        hint, mistake = _explain_error(exc.error, self.source)
        said = str(exc).removeprefix(f"{getattr(exc, 'call', '')}: ")  # ``what`` names the call already
        fail(f"{self.what}: {said}" + (f"\n  {hint}" if hint else ""), mistake)


# ───────────────────────────── modules with known weights ─────────────────────────────


def linear_weights(
    layers: dict[str, tuple[int, int]], *, bias, seed: int, scale: float = 1.0, bias_values: bool = False
) -> dict:
    """Fixed weights in the ``state_dict`` layout of ``nn.Linear`` layers: ``{"W_query.weight": (out, in), ...}``.

    ``layers`` maps a layer name to (in_features, out_features); ``bias`` is a bool or the set of layer names that
    have a bias. The biases are zeros unless ``bias_values``: one values check per module passes it, so a forward
    that leaves the biases out (``x @ W.weight.T``) loses that check alone, not every check of the module."""
    out = {}
    for i, (name, (n_in, n_out)) in enumerate(layers.items()):
        lim = scale / n_in**0.5 * 1.7
        out[f"{name}.weight"] = fixed(n_out, n_in, seed=seed + 10 * i, low=-lim, high=lim)
        if bias is True or (not isinstance(bias, bool) and name in bias):
            b = fixed(n_out, seed=seed + 10 * i + 1, low=-0.5, high=0.5)
            out[f"{name}.bias"] = b if bias_values else torch.zeros_like(b)
    return out


def random_linear_weights(rng, layers: dict[str, tuple[int, int]], *, bias, bias_values: bool = False) -> dict:
    """Random weights in the layout of :func:`linear_weights`, zero biases unless ``bias_values`` (the same draws
    from ``rng`` either way)."""
    out = {}
    for name, (n_in, n_out) in layers.items():
        out[f"{name}.weight"] = torch.randn(n_out, n_in, generator=rng, dtype=F64) / n_in**0.5 * 1.5
        if bias is True or (not isinstance(bias, bool) and name in bias):
            b = torch.randn(n_out, generator=rng, dtype=F64) * 0.3
            out[f"{name}.bias"] = b if bias_values else torch.zeros_like(b)
    return out


def weight_names(weights: dict) -> list[str]:
    """The names in ``weights`` that are not biases: gradient checks compare these (a bias's gradient is right
    whenever the forward adds it; whether it does is the values check's, see :func:`linear_weights`)."""
    return [n for n in weights if not n.endswith(".bias")]


def qkv(d_in: int, d_out: int) -> dict:
    return {"W_query": (d_in, d_out), "W_key": (d_in, d_out), "W_value": (d_in, d_out)}


def mha_layers(d_in: int, d_out: int) -> dict:
    """The layers of a multi-head attention module: the three projections and ``out_proj``."""
    return {**qkv(d_in, d_out), "out_proj": (d_out, d_out)}


def biased(qkv_bias: bool) -> set[str]:
    """The layers with a bias in a module built with ``qkv_bias``: ``out_proj`` always, the projections too."""
    return {"W_query", "W_key", "W_value", "out_proj"} if qkv_bias else {"out_proj"}


def new_module(student, cls: str, *args, weights: dict, what: str, hint: str = "", dtype=None, **kwargs):
    """``cls(*args, **kwargs)`` built with ``seed=123``, in eval mode, moved to ``dtype`` and holding ``weights``
    (checked as :func:`load_weights` checks them), in one round trip to the learner's process. ``handle.held``:
    the weights it holds (see :func:`load_weights`), which the check's expected values must be computed from.

    Eval mode: a check of values is deterministic, so a dropout that acts where it should not (a rate hard-coded,
    ``dropout=0.0`` ignored) is judged once, by the dropout checks, which switch training on; in training mode
    it made every value check differ by chance, and a recorded call's graph unverifiable (the replay draws other
    random numbers), which forfeited the stage."""
    handle = student.new(cls, *args, seed=123, training=False, module_dtype=dtype, weights=weights, **kwargs)
    handle.held = load_weights(handle, weights, what, hint=hint)
    return handle


def load_weights(handle, weights: dict, what: str, *, hint: str = "") -> dict:
    """Load ``weights`` into the learner's module (buffers and anything else it keeps are left as they are) and
    return the weights it now holds.

    A bias the module lacks, or has beyond ``weights`` (a layer built with the wrong ``bias=``), is the mistake
    its structure check names; here it costs nothing more. A missing one is left out of what the module holds,
    an extra one is loaded as zeros, and the returned weights (``weights`` less the missing biases, a new dict:
    ``weights`` is never changed) are the ones the module computes with. Anything else that does not fit (a
    missing weight, a wrong shape, another extra parameter) fails the check.

    When the module was built with these weights (:func:`new_module`), the worker already read its state and
    loaded them if they fit exactly (the proxy checks that they do, on the state reported: ``prepared["loaded"]``);
    the same checks run here on that state, and the worker's error, if any, is raised where the separate calls
    would have raised it."""
    info = handle.info
    params = sorted(info.get("params", {}))
    prepared = handle.prepared if handle.prepared_for is weights else None
    # buffers (the mask) are part of the state too: read them back and load them unchanged
    if not info.get("buffers"):
        state = {n: _Shape(p["shape"]) for n, p in info["params"].items()}
    elif prepared is None:
        state = handle.state()
    elif prepared.get("state_error"):
        raise learner_error(prepared["state_error"])
    else:
        state = {n: _Shape(shape if shape is not None else ()) for n, shape in prepared["state"].items()}

    def layer_bias(name: str) -> bool:  # a bias whose layer's weight is there (on both sides)
        layer = name[: -len(".bias")]
        return name.endswith(".bias") and f"{layer}.weight" in state and f"{layer}.weight" in weights

    for name, w in weights.items():
        if name not in state:
            if layer_bias(name):
                continue
            mistake = MISSING_OUT_PROJ if name.split(".")[0] == "out_proj" else None
            msg = f"{what} has no parameter {name!r} (its parameters: {', '.join(params) or 'none'})"
            fail(msg + (f". {hint}" if hint else ""), mistake)
        got_shape = tuple(getattr(state[name], "shape", ()))
        if got_shape != tuple(w.shape):
            fail(f"{what}: {name} has shape {got_shape}, expected {tuple(w.shape)}" + (f". {hint}" if hint else ""))
    extra = [n for n in params if n not in weights]
    if any(not layer_bias(n) for n in extra):
        fail(
            f"{what} has parameters the exercise does not ask for: {', '.join(extra)}" + (f". {hint}" if hint else ""),
        )
    held = {n: w for n, w in weights.items() if n in state}
    if prepared is not None and prepared.get("load_error"):  # they fit, and the learner's module refused them
        raise learner_error(prepared["load_error"])
    if prepared is not None and prepared.get("loaded"):  # they fit (the proxy checked), and were loaded
        return held
    if info.get("buffers") and not any(isinstance(v, Out) for v in state.values()):
        state = handle.state()  # only the shapes were reported: the buffers' values are needed to load them back
    merged = {}  # the given weights, zeros for an extra bias, and the module's own buffers (read back) unchanged
    for n, v in state.items():
        if n in weights:
            merged[n] = weights[n]
        elif n in extra:
            merged[n] = torch.zeros(v.shape, dtype=F64)
        elif isinstance(v, Out):
            merged[n] = v.t
    handle.load_state(merged)
    return held


class _Shape:
    def __init__(self, shape):
        self.shape = tuple(shape)


def is_a(info: dict, name: str, kind: str) -> bool:
    """Whether the submodule ``name`` of a module described as ``info`` is a torch.nn ``kind`` ("Linear"): of that
    class, or of one derived from it (a learner's subclass, or torch's own NonDynamicallyQuantizableLinear)."""
    kinds = info.get("kinds", {}).get(name)
    return info.get("modules", {}).get(name) == kind or (isinstance(kinds, list) and kind in kinds)


def expect_structure(
    info: dict,
    *,
    linears: dict[str, tuple[int, int, bool]],
    what: str,
    dropout: bool = False,
    mask: int | None = None,
    state: dict | None = None,
) -> None:
    """The module's layout as ``describe()`` reports it: named ``nn.Linear`` layers of the given sizes, an
    ``nn.Dropout``, a registered ``mask`` buffer of size (mask, mask) which, as the stubs ask, is bool and True
    where s <= t (read from ``state``, the module's state as ``handle.state()`` returns it)."""
    modules = info.get("modules", {})
    params = info.get("params", {})
    for name, (n_in, n_out, bias) in linears.items():
        if name not in modules:
            fail(
                f"{what} has no submodule {name!r} (found: {', '.join(sorted(modules)) or 'none'}). "
                f"Create self.{name} = nn.Linear({n_in}, {n_out}{'' if bias else ', bias=False'}) in __init__",
                MISSING_OUT_PROJ if name == "out_proj" else None,
            )
        if not is_a(info, name, "Linear"):
            fail(f"{what}.{name} is a {modules[name]}, expected an nn.Linear({n_in}, {n_out})")
        shape = params.get(f"{name}.weight", {}).get("shape")
        if shape != [n_out, n_in]:
            fail(
                f"{what}.{name}.weight has shape {tuple(shape or ())}, expected ({n_out}, {n_in}): "
                f"nn.Linear(in_features={n_in}, out_features={n_out}) stores its weight as (out, in)"
            )
        has_bias = f"{name}.bias" in params
        if has_bias != bias and name == "out_proj":  # qkv_bias is for the three projections only
            fail(f"{what}.out_proj {'has' if has_bias else 'has no'} bias: {OUT_PROJ_BIAS}")
        if has_bias != bias:
            fail(
                f"{what}.{name} {'has' if has_bias else 'has no'} bias, but it should "
                f"{'have one' if bias else 'have none'} here (pass bias=qkv_bias to nn.Linear)",
                NO_BIAS_SWITCH,
            )
    if dropout and not any(is_a(info, name, "Dropout") for name in modules):
        fail(
            f"{what} has no nn.Dropout submodule: create self.dropout = nn.Dropout(dropout) in __init__ and "
            "apply it to the attention weights"
        )
    if mask is not None:
        buffers = info.get("buffers", {})
        if "mask" not in buffers:
            fail(
                f"{what} has no buffer named 'mask' (buffers: {', '.join(sorted(buffers)) or 'none'}). Build the "
                "causal mask once in __init__ and keep it with self.register_buffer('mask', ...), so that "
                ".to(device) moves it with the module",
                MASK_NOT_BUFFER,
            )
        if buffers["mask"]["shape"] != [mask, mask]:
            fail(
                f"{what}.mask has shape {tuple(buffers['mask']['shape'])}, expected ({mask}, {mask}): one row "
                "and one column per position up to context_length"
            )
        got = (state or {}).get("mask")
        if state is not None and "mask" not in state:
            fail(
                f"{what}.mask is a buffer that state_dict() does not save (registered with persistent=False?): "
                "register it with self.register_buffer('mask', ...) and the default persistent=True, so that "
                "state_dict() saves it with the weights"
            )
        if state is not None and not isinstance(getattr(got, "t", None), torch.Tensor):
            fail(f"{what}.mask could not be read back as a tensor")
        if state is not None and got is not None:
            if got.dtype != "bool":
                fail(
                    f"{what}.mask is {got.dtype}; the docstring asks for a bool mask, True where step t may look at "
                    "step s (s <= t): torch.ones(context_length, context_length, dtype=torch.bool).tril()"
                )
            want = torch.ones(mask, mask, dtype=torch.bool).tril()
            if not torch.equal(got.t.to(torch.bool), want):
                inverted = torch.equal(got.t.to(torch.bool), ~want)
                fail(
                    f"{what}.mask is not True exactly where s <= t (the lower triangle with the diagonal)"
                    + (": it is True on the future, the inverse of what the docstring asks" if inverted else ""),
                    FUTURE_BUFFER if inverted else None,  # how forward uses it is the value checks' business
                )


# ───────────────────────────── forbidden shortcuts ─────────────────────────────


def forbidden_apis(reply: dict) -> tuple[list[str], str | None, list[str]]:
    """From the judge's record of a call (``record=``, see :mod:`autograder.sandbox.evidence`): the PyTorch attention
    APIs the call's graph reaches, the mistake's name, and why the graph could not be verified (if it could
    not)."""
    names = (reply.get("record") or {}).get("forbidden") or []
    apis, mistake, unverified = set(), None, []
    for n in names:
        if n.startswith("unverifiable: "):
            unverified.append(n[len("unverifiable: ") :])
        elif n == TORCH_CODE_MARK:
            apis.add("torch's own Python attention code (a function of torch that computes attention)")
            mistake = mistake or TORCH_CODE_CALLED
        elif "multi_head_attention" in n or "transformer_encoder" in n:
            apis.add("nn.MultiheadAttention / F.multi_head_attention_forward")
            mistake = MHA_CALLED
        elif "attention" in n or "scaled_dot_product" in n:
            apis.add("F.scaled_dot_product_attention")
            mistake = mistake or SDPA_CALLED
    return sorted(apis), mistake, unverified


def require_by_hand(reply: dict, what: str, expected: torch.Tensor | None = None, mistakes=None) -> None:
    """No forbidden API (else the stage forfeits), and a graph that could be verified; ``expected``: the call's
    correct value (the check counts only with correct values, see ``checking.credited``)."""
    from autograder.checks import credited

    apis, mistake, unverified = forbidden_apis(reply)
    what = what.split(", compared with ")[0]  # the call, without the reference its value is compared with
    if apis:
        fail(
            f"{what} calls {' and '.join(apis)}. This stage must be written by hand (scores, mask, softmax, "
            "@ v): PyTorch's version is what your answer is compared with, so calling it earns no points "
            "in this stage.",
            mistake,
            forfeit=True,
        )
    if unverified:
        fail(
            f"the autograder could not verify how {what} computed its answer: {unverified[0]}. It traces your "
            "call and replays the tensor operations it recorded, and they must give your answer, also on other "
            "inputs; work done outside torch (numpy, Python numbers, .item()) or inside torch.vmap, by code that "
            "hides from the trace, or that changes between calls cannot be verified (@ and softmax batch over any "
            "leading dims by themselves). This stage must be written by hand with "
            "torch operations, so it earns no points until it can be verified.",
            forfeit=True,
        )
    if expected is not None:
        credited(reply.get("value"), expected, what, mistakes)


# ───────────────────────────── comparisons ─────────────────────────────


def by_hand_module(student, cls: str, args: tuple, weights: dict, oracle_name: str, *extra, what: str):
    """The module a "written by hand" check records, and the reference its call must give (``record=``, see
    :func:`autograder.sandbox.evidence.verify`). Built holding the judge's ``weights`` when its parameters take
    them: the reference is then the judge's alone, whatever the learner's process says about its state. A module
    whose parameters do not (one that wraps nn.MultiheadAttention has others) keeps its own weights, read back from
    its process (only numbers: the reference is computed here); a state that cannot be read, or that holds a weight
    that is not finite (whose reference any NaN would match), is not evidence."""
    from autograder import oracle
    from autograder.checks import CheckFailed
    from autograder.sandbox.errors import StudentFailure

    try:
        handle = new_module(student, cls, *args, weights=weights, what=what)
        return handle, lambda x: oracle.expected(oracle_name, x, handle.held, *extra)
    except CheckFailed:
        pass
    handle = student.new(cls, *args, seed=123)
    try:
        state = handle.state()
    except StudentFailure as exc:
        fail(
            f"the autograder could not read the weights of {what} ({exc}), so how it computes cannot be verified. "
            "This stage must be written by hand with torch operations, so it earns no points until it can be "
            "verified.",
            forfeit=True,
        )
    own = {name: value.t.to(F64) for name, value in state.items() if isinstance(value, Out)}
    odd = [name for name, value in own.items() if value.is_floating_point() and not bool(value.isfinite().all())]
    if odd:  # a reference of NaN is matched by any NaN: it verifies nothing
        fail(
            f"{what} holds weights that are not finite numbers ({', '.join(sorted(odd))}), so how it computes "
            "cannot be verified. Keep the parameters the exercise asks for, created as the stub says"
        )
    return handle, lambda x: oracle.expected(oracle_name, x, own, *extra)


def expect_close_by_hand(reply: dict, expected: torch.Tensor, *, what: str, mistakes: dict | None = None, **kw):
    """``expect_close`` for a call made with ``record=``: no points when a forbidden API was used."""
    from autograder.checks import expect_close

    require_by_hand(reply, what)
    return expect_close(reply["value"], expected, what=what, mistakes=mistakes, **kw)


def expect_dropout_in_training(student, handle, args: tuple, expected: torch.Tensor, heads: tuple, p: float, what: str):
    """``handle(*args)`` in training mode (dropout ``p``, seed 7) beside ``expected``, its eval-mode output: the
    dropout must act, on the attention weights of every head (``heads``: their weights and values, see
    :func:`expect_dropout_on_weights`). A module with no ``nn.Dropout`` at all has lost the structure check
    already: not a second check here."""
    handle.train(True)
    with explained(student, what):
        got = handle(*args, cast=torch.float64, seed=7)
    y = expect_shape(got, tuple(expected.shape), what + " in training mode").t.to(torch.float64)
    if torch.allclose(y, expected, rtol=1e-7, atol=1e-9):
        if not any(is_a(handle.info, name, "Dropout") for name in handle.info.get("modules", {})):
            return
        each = "each head's" if heads[0].shape[1] > 1 else "the"
        fail(
            f"{what} in training mode gave exactly the eval-mode output: the dropout is never applied. Pass {each} "
            "attention weights through self.dropout after the softmax and before @ v.",
            DROPOUT_UNUSED,
        )
    weights, values = heads
    expect_dropout_on_weights(y, weights, values, p, what, expected)


def expect_dropout_on_weights(
    y: torch.Tensor, weights: torch.Tensor, values: torch.Tensor, p: float, what: str, expected: torch.Tensor
):
    """``y`` (B, T, nh * hs_v), an attention's output in training mode with dropout ``p``, next to the heads'
    weights (B, nh, T, T_k) and values (B, nh, T_k, hs_v) computed here, and ``expected``, the eval-mode output:
    dropout on the attention weights cuts whole links, so each head's output at step t must be 1 / (1 - p) times
    the sum of w[t, s] v[s] over some of the keys s it sees (those of a nonzero weight: all their subsets are
    tried, T_k small). An output whose values are each 0 or 1 / (1 - p) times the eval value had its dropout on
    the output, which is named."""
    scale = 1.0 / (1.0 - p)
    zero = y.abs() <= 1e-9
    scaled = (y - scale * expected).abs() <= 1e-7 * (1 + expected.abs())
    if bool((zero | scaled).all()) and not bool((zero.all(-1) | scaled.all(-1)).all()):
        fail(
            f"{what} in training mode: every output value is either 0 or {scale:g} x the eval value, one by one: "
            "the dropout is applied to the output. Apply it to the attention weights (after the softmax, "
            "before @ v), so that whole links between positions are cut.",
            DROPOUT_OUTPUT,
        )
    import itertools

    B, nh, T, Tk = weights.shape
    hs = values.shape[-1]
    # float32's rounding (about 6e-8) with room to spare: an answer computed partly in float32 loses the precision
    # check alone, never this one, while dropout elsewhere (on the output, on the scores) misses by far more
    scale, bound = 1.0 / (1.0 - p), 1e-5 * (1 + float(values.abs().max()))
    for b, h, t in itertools.product(range(B), range(nh), range(T)):
        seen = weights[b, h, t].nonzero().reshape(-1)  # the causal past, the real keys
        keep = torch.tensor(list(itertools.product((0.0, 1.0), repeat=len(seen))), dtype=torch.float64)
        candidates = scale * (keep * weights[b, h, t, seen]) @ values[b, h, seen]  # (2^seen, hs_v)
        got = y[b, t, h * hs : (h + 1) * hs]
        if float((candidates - got).abs().amax(-1).min()) > bound:
            head = f" (head {h})" if nh > 1 else ""
            fail(
                f"{what} in training mode: output [{b}, {t}]{head} is not a re-scaled sum of some of the value "
                "vectors it may see. Dropout belongs on the attention weights: weights = self.dropout(softmax("
                "scores)), then weights @ v."
            )


def expect_causal(
    base, changed, t: int, *, what: str, expected: torch.Tensor, mistakes=None, changed_what: str = ""
) -> None:
    """Outputs before step ``t`` must not move when inputs at step ``t`` (and later) changed. ``expected``: the
    correct value of ``base`` (the check counts only with correct values, see ``checking.credited``)."""
    from autograder.checks import credited

    a = as_tensor(base, what).t.to(F64)
    b = as_tensor(changed, what).t.to(F64)
    if a.shape != b.shape:
        fail(f"{what}: the output shape changed from {tuple(a.shape)} to {tuple(b.shape)}")
    before, after = a[..., :t, :], b[..., :t, :]
    same = (after == before) | (before.isnan() & after.isnan())
    moved = ~same & ((after - before).abs().nan_to_num(float("inf")) > 1e-9 + 1e-6 * before.abs().nan_to_num(0.0))
    if not bool(moved.any()):
        credited(base, expected, what, mistakes)
        return
    first = tuple(moved.nonzero()[0].tolist())
    s = first[-2]
    mistake = diagnose(a, mistakes, *tolerance(F64), expected=expected)
    msg = (
        f"{what}: changing {changed_what or 'the inputs'} at step {t} (and after) changed the output at step "
        f"{s} < {t}: out{list(first)} was {float(before[first]):.4g}, then {float(after[first]):.4g} "
        f"({int(moved.sum())} of {moved.numel()} earlier values moved). Step {s} saw the future"
    )
    if mistake:  # the mistake says how the future got in (a softmax over the wrong dim leaks with the mask there)
        fail(f"{msg}.\n  this looks like a known mistake: {mistake}", mistake)
    fail(
        f"{msg}: set the scores of later steps to -inf before the softmax, so that they get exactly zero weight.",
        FUTURE_LEAKS,
    )


def perturb_from(x: torch.Tensor, t: int, seed: int) -> torch.Tensor:
    """A copy of ``x`` (..., T, C) with steps t, t+1, ... replaced by other values."""
    y = x.clone()
    y[..., t:, :] = fixed(*y[..., t:, :].shape, seed=seed, low=-2.0, high=2.0)
    return y


def sdpa(q, k, v) -> torch.Tensor:
    """PyTorch's causal attention, the value to match, on the CPU in float64 (trusted code)."""
    return torch.nn.functional.scaled_dot_product_attention(q.to(F64), k.to(F64), v.to(F64), is_causal=True)


def grads_of(reply: dict, names, what: str, upstream: torch.Tensor) -> dict:
    """The gradients of ``names`` in ``reply``, the answer to a call made with ``upstream``; a failure that says
    why when there are none: an output of another shape than ``upstream`` (whose gradients are not asked for), or
    one not connected to the parameters."""
    out = as_tensor(reply.get("value"), what)  # (None returned: "expected a tensor, got NoneType")
    if tuple(out.shape) != tuple(upstream.shape):
        fail(f"{what}: expected an output of shape {tuple(upstream.shape)}, got {tuple(out.shape)}", mistake=None)
    grads = reply.get("grads")
    if not grads:
        fail(
            f"{what}: the output is not connected to the module's parameters (no gradient at all). Compute it "
            "from the parameters with differentiable torch operations; do not use .detach(), .item(), "
            "torch.no_grad() or .data"
        )
    missing = [n for n in names if grads.get(n) is None]
    if missing:
        fail(
            f"{what}: no gradient reaches {', '.join(missing)}: the output does not depend on "
            f"{'it' if len(missing) == 1 else 'them'} through differentiable operations"
        )
    return grads
