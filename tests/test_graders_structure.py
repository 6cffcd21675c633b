"""Structural rules of the graders that the rest of the system relies on."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from autograder.course import load_course

ROOT = Path(__file__).resolve().parent.parent
GRADERS = ROOT / "autograder" / "graders"
KEYS = load_course(ROOT / "course.yml").keys  # course.yml is the only list of stages


def stage_parts(course) -> dict[str, list[Path]]:
    """What a stage needs besides its course.yml entry, per stage key."""
    return {
        s.key: [
            ROOT / "solutions" / s.file,
            ROOT / "autograder" / "oracles" / f"{s.key}.py",
            GRADERS / "public" / f"test_{s.key}.py",
            GRADERS / "hidden" / f"test_{s.key}.py",
        ]
        for s in course.stages
    }


def test_every_stage_has_a_solution_an_oracle_and_public_and_hidden_graders(course):
    missing = [
        f"stage {key!r}: missing {path.relative_to(ROOT)}"
        for key, paths in stage_parts(course).items()
        for path in paths
        if not path.is_file()
    ]
    assert not missing, "\n".join(missing)


def test_a_missing_part_is_named(tmp_path, course):
    """The walk above names the file a new stage still lacks (here: a stage with only a course.yml entry)."""
    from dataclasses import replace

    extra = replace(course.stages[0], key="new_stage", file="09_new_stage.py", index=len(course.stages))
    absent = [p for p in stage_parts(replace(course, stages=(extra,)))["new_stage"] if not p.is_file()]
    assert [str(p.relative_to(ROOT)) for p in absent] == [
        "solutions/09_new_stage.py",
        "autograder/oracles/new_stage.py",
        "autograder/graders/public/test_new_stage.py",
        "autograder/graders/hidden/test_new_stage.py",
    ]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("part", ["public", "hidden"])
def test_grader_modules_name_their_stage_and_mark_every_check(key, part):
    path = GRADERS / part / f"test_{key}.py"
    if not path.is_file():
        pytest.skip("missing: reported by test_every_stage_has_a_solution_an_oracle_and_public_and_hidden_graders")
    tree = ast.parse(path.read_text())
    stage = [
        n for n in tree.body if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "STAGE" for t in n.targets)
    ]
    assert stage and ast.literal_eval(stage[0].value) == key
    tests = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    assert tests, f"{path.name} has no checks"
    for fn in tests:
        decorators = [ast.unparse(d) for d in fn.decorator_list]
        assert any(d.startswith("check(") for d in decorators), f"{part}/{path.name}::{fn.name} lacks @check"


@pytest.mark.parametrize("key", KEYS)
def test_public_checks_use_fixed_inputs_only(key):
    """Public expected values are snapshotted for student releases: no random generator in public checks."""
    path = GRADERS / "public" / f"test_{key}.py"
    if not path.is_file():
        pytest.skip("no public graders yet")
    tree = ast.parse(path.read_text())
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        args = {a.arg for a in fn.args.args}
        assert not args & {"rng", "seed"}, f"public check {fn.name} uses random inputs"


ALLOWED_IMPORTS = {"torch", "math", "pytest", "autograder", "__future__", "itertools", "functools", "dataclasses", "re"}


def test_graders_import_only_trusted_modules():
    """Graders reach learner code only through the `student` proxy: they never import files by path."""
    for path in GRADERS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in ALLOWED_IMPORTS, f"{path.name} imports {name}"


# what a grader may reach of the autograder: the grader-authoring API and the values and errors the proxy hands it
GRADER_API = (
    "autograder.checks",
    "autograder.oracle",
    "autograder.graders",
    "autograder.sandbox.errors",
    "autograder.sandbox.values",
)


def test_graders_never_import_the_process_manager():
    """Every grader module, imported in a fresh interpreter, loads of the autograder only the grader-authoring API
    (never the sandbox's host or proxy, the worker, the runner or the instructor's tools)."""
    import subprocess
    import sys

    code = (
        "import importlib, pathlib, sys\n"
        f"for p in sorted(pathlib.Path({str(GRADERS)!r}).rglob('*.py')):\n"
        f"    parts = p.relative_to({str(ROOT)!r}).with_suffix('').parts\n"
        "    importlib.import_module('.'.join(parts[:-1] if parts[-1] == '__init__' else parts))\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('autograder.'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = proc.stdout.split()
    assert "autograder.graders.attention" in loaded and "autograder.checks" in loaded  # the walk did import them
    outside = [m for m in loaded if m != "autograder.sandbox" and not m.startswith(GRADER_API)]
    assert not outside, f"graders import {outside}"


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("part, helper", [("public", "expect_precise"), ("hidden", "expect_half")])
def test_one_precision_check_per_stage(key, part, helper):
    """Each stage loses a float32-precision answer once, in its public "keeps the input's precision" check
    (expect_precise), and grades float16 and bfloat16 in one hidden check (expect_half)."""
    path = GRADERS / part / f"test_{key}.py"
    if not path.is_file():
        pytest.skip("missing: reported by test_every_stage_has_a_solution_an_oracle_and_public_and_hidden_graders")
    tree = ast.parse(path.read_text())
    using = [
        fn.name
        for fn in tree.body
        if isinstance(fn, ast.FunctionDef)
        and fn.name.startswith("test_")
        and any(isinstance(n, ast.Name) and n.id == helper for n in ast.walk(fn))
    ]
    assert len(using) == 1, f"{part}/{path.name}: checks calling {helper}: {using} (exactly one expected)"
