"""What a grader check is made of: the ``@check`` decorator, expectations that explain themselves, tolerances.

A check is a pytest test function in ``autograder/graders/{public,hidden}/test_<stage>.py``::

    @check("context row 2 matches the seed table")
    def test_seed_table(student):
        got = student.call("context_vectors", INPUTS, dtype=torch.float32)
        expect_close(got, oracle.expected("context_vectors", INPUTS), what="context_vectors(inputs)",
                     mistakes=oracle.mistakes("context_vectors", INPUTS))

Expected values always come from :mod:`autograder.oracle` (float64 on the CPU, trusted code). When a check
fails, the learner sees what was checked, expected vs got in a few lines, and — when the answer equals the
output of a known mistake on the same input — the mistake's name.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterator, NoReturn

import numpy as np
import torch

from ..sandbox.values import Opaque, Out

# One table of tolerances per dtype, chosen from the dtype the check asked for (never the one returned):
# (rtol, atol), where atol is relative to the largest magnitude of the expected value (at least 1), so that a
# check's margin does not depend on how large the numbers of a seed's inputs happen to be. Value checks judge a
# float64 answer at float32's tolerance: an answer computed at float32 precision has the right values and
# loses points once, in the stage's "keeps the input's precision" check (PRECISION).
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-4, 1e-5),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (5e-2, 5e-2),
}
# What "keeps the input's precision" demands of a float64 answer: float64 rounding errors are about 1e-16
# relative, float32's about 6e-8, so the band separates them by more than a thousand both ways.
PRECISION: tuple[float, float] = (1e-11, 1e-11)
DTYPE_NAMES = {str(d).replace("torch.", ""): d for d in TOLERANCES}


# A replayed graph recomputes the learner's own operations: it must agree with the answer to the dtype's rounding.
REPLAY_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-9),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (5e-2, 5e-2),
}


def tolerance(dtype, table: dict | None = None) -> tuple[float, float]:
    table = TOLERANCES if table is None else table
    if isinstance(dtype, str):
        dtype = DTYPE_NAMES.get(dtype, torch.float32)
    return table.get(dtype, table[torch.float32])


@dataclass(frozen=True)
class CheckInfo:
    name: str
    weight: float = 1.0
    construction: bool = False


def check(name: str, weight: float = 1.0, *, construction: bool = False):
    """Mark a pytest test function as a graded check with a learner-facing name and a weight.

    A stage's points are shared among its checks in proportion to their weights. ``construction=True`` marks a
    check of how an object is built (parameters, buffers, a ValueError), the only kind an answer whose functions
    compute nothing may pass (tests/test_trivial_answers.py); every other check looks at values computed by the
    learner's code, and a check of a property of an output counts only with correct values (:func:`credited`)."""

    def mark(fn):
        fn._ag_check = CheckInfo(name, float(weight), construction)
        return fn

    return mark


class CheckFailed(AssertionError):
    """A check's verdict with a teaching message; ``mistake`` names a recognised known mistake.

    ``forfeit=True`` means the whole stage earns nothing (a forbidden shortcut such as calling
    ``scaled_dot_product_attention`` in a stage that must be written by hand): its other checks pass or fail
    as usual, so the learner still sees what works, but no point of the stage is awarded.

    ``once`` names a constraint whose breach costs points once per stage (:data:`DTYPE_KEPT`): the first check of
    the stage that fails for it loses its points, later ones that fail for it alone are shown as failed and keep
    theirs. Raised only after the values of the same answer were found right."""

    def __init__(
        self,
        message: str,
        mistake: str | None = None,
        figures: dict | None = None,
        forfeit: bool = False,
        once: str | None = None,
    ):
        super().__init__(message)
        self.mistake = mistake
        self.figures = figures  # for reports: {"heatmaps": [{"title", "expected", "got"}]} (see heatmaps())
        self.forfeit = forfeit
        self.once = once


def fail(
    message: str,
    mistake: str | None = None,
    figures: dict | None = None,
    forfeit: bool = False,
    once: str | None = None,
) -> NoReturn:
    raise CheckFailed(message, mistake, figures, forfeit, once)


# The answer comes back in another dtype than the one asked for (the input's, or the dtype= argument's): one
# mistake, however many checks of a stage see it (a float64 call, the precision check, a float16 call).
DTYPE_KEPT = "dtype kept"


def heatmaps(expected, got, title: str, max_size: int = 24) -> dict | None:
    """Expected and learner (T, T) matrices of attention weights or a mask, as small nested lists for the
    reports' heatmaps; None unless both are square in their last two dims and the expected one is weights (each
    row non-negative, summing to 1) or a mask (only 0/1, or 0/-inf): a square output of values, such as
    multi-head attention's (B, T, C) with T == C, is not drawn as if it were weights. Leading dims: the first
    matrix."""
    exp_t = expected.t if isinstance(expected, Out) else expected
    got_t = got.t if isinstance(got, Out) else got
    if (
        not (isinstance(exp_t, torch.Tensor) and isinstance(got_t, torch.Tensor))
        or exp_t.dim() < 2
        or tuple(exp_t.shape) != tuple(got_t.shape)
        or exp_t.shape[-1] != exp_t.shape[-2]
        or not 2 <= exp_t.shape[-1] <= max_size
    ):
        return None
    m = exp_t.detach().to("cpu", torch.float64)
    if exp_t.dtype != torch.bool:
        finite = m[torch.isfinite(m)]
        mask = bool(((m == 0) | (m == 1)).all()) or bool(((m == 0) | (m == -math.inf)).all())
        weights = (
            bool(torch.isfinite(m).all())
            and bool((finite >= 0).all())
            and bool(torch.allclose(m.sum(-1), torch.ones((), dtype=torch.float64), atol=1e-4))
        )
        if not (mask or weights):
            return None

    def rows(t):
        m = t.detach().to("cpu", torch.float64).reshape(-1, t.shape[-2], t.shape[-1])[0]
        return [[round(v, 4) if math.isfinite(v) else str(v) for v in row] for row in m.tolist()]

    if exp_t.dim() > 2:
        title += " (first matrix of the batch)"
    return {"heatmaps": [{"title": title, "expected": rows(exp_t), "got": rows(got_t)}]}


# ───────────────────────────── formatting ─────────────────────────────


def _fmt(x: float) -> str:
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return str(x)
    return f"{x:.4g}"


def _preview(t: torch.Tensor, n: int = 6, start: int = 0) -> str:
    """``n`` values of ``t`` (flattened) from index ``start``: where a comparison found the first difference, so
    that the values shown for the expected and the returned tensor are not the same ones."""
    flat = t.detach().reshape(-1)[start : start + n].tolist()
    before = "..., " if start > 0 else ""
    more = ", ..." if t.numel() > start + n else ""
    return "[" + before + ", ".join(_fmt(float(v)) for v in flat) + more + "]"


def as_tensor(got, what: str) -> Out:
    """Insist that the learner returned a tensor; explain what came back otherwise."""
    if isinstance(got, Out):
        return got
    if isinstance(got, torch.Tensor):  # a value the check derived itself, already on the CPU
        return Out(got, str(got.dtype).replace("torch.", ""), "cpu")
    if isinstance(got, Opaque):
        fail(f"{what}: expected a tensor, got {got.description}")
    if isinstance(got, tuple) and got and isinstance(got[0], Out):
        fail(f"{what}: expected a single tensor, got a tuple of {len(got)} values")
    fail(f"{what}: expected a tensor, got {type(got).__name__} {str(got)[:60]}")


def expect_shape(got, shape, what: str) -> Out:
    out = as_tensor(got, what)
    if tuple(out.shape) != tuple(shape):
        fail(f"{what}: expected shape {tuple(shape)}, got {tuple(out.shape)}", mistake=None)
    return out


def expect_meta(got, *, dtype=None, device=None, what: str, expected: torch.Tensor | None = None, mistakes=None) -> Out:
    """The answer's dtype and device are the input's; ``expected``: its correct value (the check counts only
    with correct values, see :func:`credited`)."""
    out = as_tensor(got, what)
    if dtype is not None:
        want = str(dtype).replace("torch.", "")
        if out.dtype != want:
            credited(out, expected, what, mistakes, dtype=dtype)  # wrong values are their own failure
            fail(
                f"{what}: expected dtype {want} (the input's, or the dtype= argument's), got {out.dtype}. "
                "Create new tensors in the dtype asked for: dtype=x.dtype, or the dtype= argument.",
                # charged once only where the values were found right: an answer no value check saw pays each time
                once=DTYPE_KEPT if expected is not None else None,
            )
    if device is not None:
        want = str(device)
        if out.device.split(":")[0] != want.split(":")[0]:
            fail(
                f"{what}: expected the result on {want} (the input's, or the device= argument's), got "
                f"{out.device}. Create new tensors on the device asked for: device=x.device, or the device= argument."
            )
    credited(out, expected, what, mistakes, dtype=dtype)
    return out


def _f64(t: torch.Tensor) -> torch.Tensor:
    """``t`` as float64 without autograd history (itself when it already is: no conversion to pay for)."""
    return t if t.dtype is torch.float64 and not t.requires_grad else t.detach().to(torch.float64)


def _values(t: torch.Tensor) -> np.ndarray:
    """``t``'s values as a float64 numpy array (a view of ``t`` when it already is float64 on the CPU): the
    comparisons below are a dozen element-wise steps on small arrays, each a few times cheaper in numpy than
    as a torch op."""
    return _f64(t).cpu().numpy()


def magnitude(t: torch.Tensor) -> float:
    """The largest finite magnitude in ``t``, at least 1: what absolute tolerances are relative to."""
    return _largest_finite(_values(t))


def _largest_finite(values: np.ndarray) -> float:
    a = np.abs(values.reshape(-1))
    a[~np.isfinite(a)] = 0.0
    return max(1.0, float(a.max())) if a.size else 1.0


def compare(got: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float) -> tuple[bool, str]:
    """(close?, a short description of where they differ). ``atol`` is relative to :func:`magnitude`."""
    ok, where, _ = _compare(got, expected, rtol, atol)
    return ok, where


def _compare(got: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float) -> tuple[bool, str, int]:
    """:func:`compare`, and the flat index of the first difference (0 when there is none)."""
    g, e = _values(got), _values(expected)
    if g.shape != e.shape:
        return False, f"shape {tuple(g.shape)} instead of {tuple(e.shape)}", 0
    if g.size == 0:
        return True, "", 0
    shape, g, e = g.shape, g.reshape(-1), e.reshape(-1)  # flat: a 0-dim answer too is an array
    atol = atol * _largest_finite(e)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf is NaN
        diff = np.abs(g - e)
        # within the tolerance of a finite expected value, or exactly it: an infinity only by the same infinity
        # (a tolerance relative to an infinite value would accept any number)
        close = (diff <= atol + rtol * np.abs(e)) & np.isfinite(e) | (g == e)
    g_nan, e_nan = np.isnan(g), np.isnan(e)
    ok = close | (g_nan & e_nan)
    if ok.all():
        return True, "", 0
    first = int(np.argmax(~ok))
    bad = tuple(int(i) for i in np.unravel_index(first, shape))
    nan = ~ok & (g_nan | e_nan)  # a NaN where a number belongs, or a number where NaN does
    wrong = diff[~ok & ~nan]
    errors = [f"max abs error {_fmt(float(wrong.max()))}"] if wrong.size else []
    if (nan & g_nan).any():
        errors.append(f"{int((nan & g_nan).sum())} NaN where a number was expected")
    if (nan & ~g_nan).any():
        errors.append(f"{int((nan & ~g_nan).sum())} numbers where NaN was expected")
    return (
        False,
        f"{int((~ok).sum())} of {g.size} values differ; first at index {bad}: expected "
        f"{_fmt(float(e[first]))}, got {_fmt(float(g[first]))}; " + "; ".join(errors),
        first,
    )


def diagnose(got: torch.Tensor, mistakes, rtol: float, atol: float, *, expected=None) -> str | None:
    """The name of the known mistake that explains ``got``: its output matches ``got`` at the scoring tolerance
    (rtol, atol) and, on these inputs, differs from ``expected`` (the correct answer) beyond it. A variant that
    gives the correct answer here (a scale by sqrt(hs_v) where hs_v == hs, a missing identity out_proj) explains
    nothing and is never named; nor is any when two mistakes explain ``got`` alike (with one step, T = 1, several
    mistakes give the same output): these inputs cannot tell which one was made."""
    got = got.t if isinstance(got, Out) else got
    found = list(_explaining(got, mistakes, rtol, atol, expected))
    return found[0] if len(found) == 1 else None


def _explaining(got: torch.Tensor, mistakes, rtol: float, atol: float, expected) -> Iterator[str]:
    for name, wrong in (mistakes or {}).items():
        if wrong is None or not isinstance(wrong, torch.Tensor) or tuple(wrong.shape) != tuple(got.shape):
            continue
        if wrong.numel() and bool(torch.isnan(wrong).all()):  # NaN everywhere: any answer of NaN would match it
            continue
        if (
            expected is not None
            and tuple(wrong.shape) == tuple(expected.shape)
            and compare(wrong, expected, rtol, atol)[0]
        ):
            continue
        if compare(got, wrong, rtol, atol)[0]:
            yield name


def expect_close(
    got,
    expected: torch.Tensor,
    *,
    what: str,
    dtype=None,
    mistakes=None,
    rtol: float | None = None,
    atol: float | None = None,
) -> Out:
    """Values of ``got`` equal ``expected`` within the tolerance of ``dtype``, else of the dtype the call asked
    for (``Out.asked``), else float32's; otherwise a teaching failure. Never the tolerance of the dtype the
    learner returned: a float32 check answered in bfloat16 is judged at float32's tolerance."""
    out = as_tensor(got, what)
    judged = dtype or out.asked or torch.float32
    d_rtol, d_atol = tolerance(judged)
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    if tuple(out.shape) != tuple(expected.shape):
        mistake = diagnose(out.t, mistakes, rtol, atol, expected=expected)
        msg = f"{what}: expected shape {tuple(expected.shape)}, got {tuple(out.shape)}"
        if mistake:
            msg += f"\n  this looks like a known mistake: {mistake}"
        fail(msg, mistake)
    ok, where, first = _compare(out.t, expected, rtol, atol)
    if ok:
        return out
    mistake = diagnose(out.t, mistakes, rtol, atol, expected=expected)
    start = max(0, first - 1)  # the values shown begin just before the first difference
    lines = [
        f"{what}: values differ from the reference ({where})",
        f"  expected {_preview(expected, start=start)}",
        f"  got      {_preview(out.t, start=start)}",
    ]
    if mistake:
        lines.append(f"  this looks like a known mistake: {mistake}")
    fail("\n".join(lines), mistake, heatmaps(expected, out.t, what))


def expect_precise(got, expected: torch.Tensor, *, what: str, mistakes=None) -> Out:
    """The "keeps the input's precision" check: ``got`` (a float64 call) has the right values, comes back in
    float64 and is as accurate as float64 arithmetic makes it (:data:`PRECISION`)."""
    out = expect_close(got, expected, what=what, dtype=torch.float64, mistakes=mistakes)
    if out.dtype != "float64":
        fail(
            f"{what}: float64 inputs gave a {out.dtype} answer: keep the input's dtype (create new tensors with "
            "dtype=x.dtype, do not call .float())",
            once=DTYPE_KEPT,
        )
    ok, where = compare(out.t, expected, *PRECISION)
    if not ok:
        fail(
            f"{what}: the values are right only to float32 precision ({where}); float64 inputs must be computed "
            "in float64 all the way. Look for .float(), a float32 constant (torch.tensor(..., dtype=torch.float32)"
            " or a float32 mask or scale) or a tensor created without dtype=x.dtype on the way."
        )
    return out


def softmax_tolerance(dtype, logits: torch.Tensor) -> tuple[float, float]:
    """The tolerance of a softmax of large ``logits`` computed in ``dtype``: a backward-stable softmax (the max
    subtracted, or logsumexp) is the exact softmax of logits moved by a few ulps of the largest one, which moves
    the outputs by that much relative (eps * max|x|): both ways are correct and must pass."""
    rtol, atol = tolerance(dtype)
    if isinstance(dtype, str):
        dtype = DTYPE_NAMES.get(dtype, torch.float32)
    return rtol + 4 * torch.finfo(dtype).eps * float(_f64(logits).abs().max()), atol


HALVES = (torch.float16, torch.bfloat16)  # the half-precision dtypes the hidden checks try on the CPU


def expect_half(got, expected: torch.Tensor, dtype: torch.dtype, *, what: str, mistakes=None) -> Out:
    """A call made in a half-precision ``dtype``: the answer comes back in it, finite where the reference is, and
    equals the float64 reference at that dtype's tolerance. (A -1e9 fill overflows float16: use -inf.)"""
    out = as_tensor(got, what)
    want = str(dtype).replace("torch.", "")
    # a known mistake is named only at float16's tolerance: at bfloat16's (5 %), answers of other mistakes, or of
    # none, come within reach of a variant's numbers by coincidence
    named = mistakes if dtype == torch.float16 else None
    expect_close(out, expected, what=what, dtype=dtype, mistakes=named)  # judged at the asked dtype's tolerance
    if out.dtype != want:
        fail(
            f"{what}: expected dtype {want} (the input's, or the dtype= argument's), got {out.dtype}. Create new "
            "tensors in the dtype asked for (dtype=x.dtype, or the dtype= argument), and do not return a float32 copy.",
            once=DTYPE_KEPT,
        )
    return out


def credited(got, expected: torch.Tensor | None, what: str, mistakes=None, dtype=None) -> Out:
    """For checks of a property of an output (shape, dtype, device, input unchanged, written by hand,
    vectorised, causal, ...): the property earns its points only together with correct values, so an answer that
    computes nothing (zeros, the input returned, noise) earns nothing from it. ``expected`` None: no values to
    compare (the check tests a property no trivial answer has)."""
    if expected is None:
        return as_tensor(got, what)
    return expect_close(
        got, expected, what=what + " (this check counts only with correct values)", dtype=dtype, mistakes=mistakes
    )


def expect_unchanged(reply: dict, what: str, expected: torch.Tensor | None = None, mistakes=None, dtype=None) -> Out:
    """``reply`` from ``student.call(..., full=True, return_inputs=True)`` left its inputs as they were;
    ``expected``: its correct value (the check counts only with correct values, see :func:`credited`)."""
    out = credited(reply.get("value"), expected, what, mistakes, dtype=dtype)
    changed = [i for i, c in enumerate(reply.get("inputs_changed") or []) if c]
    if changed:
        fail(
            f"{what} modified its input (argument {changed[0] + 1}) in place: "
            "make sure operations like +=, masked_fill_ or div_ are not done on the input",
            mistake="input modified in place",
        )
    return out


def expect_kept(
    reply: dict, what: str, expected: torch.Tensor | None, *, shape=None, dtype=None, device=None, mistakes=None
) -> Out:
    """The "inputs unchanged, dtype and device kept" check of a call made with ``full=True, return_inputs=True``:
    correct values (``expected``: the check counts only with them, see :func:`credited`), its inputs as they
    were, ``shape`` when given, and the input's ``dtype`` and ``device``. Returns the answer."""
    out = expect_unchanged(reply, what, expected, mistakes, dtype=dtype)
    if shape is not None:
        expect_shape(out, shape, what)
    return expect_meta(out, dtype=dtype, device=device, what=what)


# ───────────────────────────── reading a learner's error ─────────────────────────────


def error_line(error: dict, source: str = "") -> str:
    """The learner's line of code that raised ``error`` (a reply's error record). The child sends the line when
    it can; otherwise it is read from ``source``, the file the judge already holds."""
    where = error.get("where") or {}
    code, line = where.get("code") or "", where.get("line")
    if not code and isinstance(line, int) and isinstance(source, str) and 0 < line <= len(source.splitlines()):
        code = source.splitlines()[line - 1]
    return code


def uses_dot_T(code: str, *, on_weights: bool = True) -> bool:
    """Does a line of code use the ``.T`` attribute (``keys.T``), not a longer name (``x.Total``, ``.Tensor``)?
    ``on_weights=False``: only where ``.T`` is not applied to a module's own attribute (``self.W_query.T``,
    ``self.W_query.weight.T``, ``layer.weight.T``): those are 2-D matrices, whose ``.T`` is an ordinary transpose."""
    for found in re.finditer(r"\.T(?![A-Za-z0-9_])", code):
        if on_weights or not re.search(r"(\bself(\.\w+)+|\.weight)$", code[: found.start()]):
            return True
    return False
