"""Points reward work done: answers that compute nothing earn nothing from the checks of an output.

Each trivial answer below is the solutions with every function of every stage (and every module's ``forward``)
replaced by something of the right shape, dtype and device that involves no work: zeros, ones, the input handed
back, random noise, uniform attention weights (a plain class's public methods, such as a cache's append, answer
the same way). The constructors stay correct, so the only checks such an answer
may pass are the ones marked ``construction=True`` (parameters, buffers, a ValueError). Generated for every stage
in course.yml, so a new stage is covered as soon as it has graders.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from autograder.runner import Submission, grade

ROOT = Path(__file__).resolve().parent.parent

# what each trivial answer returns, given the correct answer ``ref`` (only for its shape, dtype and device) and
# the call's tensor arguments ``args``
TRIVIAL = {
    "zeros": "return _torch.zeros_like(ref)",
    "ones": "return _torch.ones_like(ref)",
    "input": "same = [a for a in args if a.shape == ref.shape]\n    return same[-1] if same else _torch.ones_like(ref)",
    "noise": "if ref.dtype == _torch.bool:\n"
    "        return _torch.rand(ref.shape, device=ref.device) < 0.5\n"
    "    return _torch.randn_like(ref)",
    "uniform": "if ref.dtype == _torch.bool:\n"
    "        return _torch.ones_like(ref)\n"
    "    same = [a for a in args if a.shape == ref.shape and a.dim() >= 2]\n"
    "    if same:  # attention spread evenly over every step, the future included\n"
    "        return same[-1].mean(-2, keepdim=True).expand_as(ref).clone()\n"
    "    return _torch.full_like(ref, 1.0 / ref.shape[-1])",
}

WRAPPER = """

import torch as _torch


def _trivial(ref, args):
    if isinstance(ref, tuple):  # a pair such as a cache's (keys, values): each part trivial
        return tuple(_trivial(r, args) for r in ref)
    if not isinstance(ref, _torch.Tensor):  # None from reset(), a length: nothing computed to replace
        return ref
    args = [a for a in args if isinstance(a, _torch.Tensor)]
    {body}


def _wrap(fn):
    def wrapped(*args, **kwargs):
        return _trivial(fn(*args, **kwargs), args)
    return wrapped


for _name in {names!r}:
    _obj = globals()[_name]
    if isinstance(_obj, type) and hasattr(_obj, "forward"):
        _obj.forward = _wrap(_obj.forward)
    elif isinstance(_obj, type):  # a plain class (a cache): every public method
        for _method in [m for m, f in vars(_obj).items() if callable(f) and not m.startswith("_")]:
            setattr(_obj, _method, _wrap(getattr(_obj, _method)))
    else:
        globals()[_name] = _wrap(_obj)
"""


def trivial_source(stage, kind: str) -> str:
    solution = (ROOT / "solutions" / stage.file).read_text()
    return solution + WRAPPER.format(body=TRIVIAL[kind], names=list(stage.functions))


def construction_checks(course) -> dict[str, set[str]]:
    """Stage key -> the names of its checks marked construction=True."""
    out: dict[str, set[str]] = {}
    for stage in course.stages:
        names = out.setdefault(stage.key, set())
        for part in ("public", "hidden"):
            module = importlib.import_module(f"autograder.graders.{part}.test_{stage.key}")
            for fn in vars(module).values():
                info = getattr(fn, "_ag_check", None)
                if info is not None and info.construction:
                    names.add(info.name)
    return out


@pytest.fixture(scope="module")
def graded(course, sandbox):
    subs = [Submission(kind, {s.key: (s.file, trivial_source(s, kind)) for s in course.stages}) for kind in TRIVIAL]
    return {r.student: r for r in grade(course, subs, sandbox=sandbox, seed=77)}


def test_every_trivial_answer_earns_only_construction_points(graded, course):
    allowed = construction_checks(course)
    unearned = []
    for kind, result in graded.items():
        for stage in result.stages:
            for c in stage.checks:
                if c.passed and c.name not in allowed[stage.key]:
                    unearned.append(f"{kind}: {stage.key}: {c.name!r}")
    assert not unearned, "points for computing nothing:\n" + "\n".join(unearned)


def test_construction_checks_are_really_passed(graded, course):
    """The constructors of a trivial answer are the solutions': their checks pass, so the test above really
    compares against a score that is not zero where a stage has construction checks."""
    allowed = construction_checks(course)
    result = graded["zeros"]
    for stage in result.stages:
        passed = {c.name for c in stage.checks if c.passed}
        assert passed == allowed[stage.key], (stage.key, passed ^ allowed[stage.key])
        earned = sum(c.max_points for c in stage.checks if c.name in allowed[stage.key])
        assert stage.score == pytest.approx(earned, abs=1e-3)
