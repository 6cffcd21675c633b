"""Structural rules of the graders that the rest of the system relies on."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from autograder.course import CURRICULUM_KEYS

GRADERS = Path(__file__).resolve().parent.parent / "autograder" / "graders"


@pytest.mark.parametrize("key", CURRICULUM_KEYS)
@pytest.mark.parametrize("part", ["public", "hidden"])
def test_every_stage_has_public_and_hidden_graders(key, part):
    path = GRADERS / part / f"test_{key}.py"
    assert path.is_file(), f"missing {path.relative_to(GRADERS.parent.parent)}"
    tree = ast.parse(path.read_text())
    stage = [n for n in tree.body if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "STAGE" for t in n.targets)]
    assert stage and ast.literal_eval(stage[0].value) == key
    tests = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    assert tests, f"{path.name} has no checks"
    for fn in tests:
        decorators = [ast.unparse(d) for d in fn.decorator_list]
        assert any(d.startswith("check(") for d in decorators), f"{part}/{path.name}::{fn.name} lacks @check"


@pytest.mark.parametrize("key", CURRICULUM_KEYS)
def test_public_checks_use_fixed_inputs_only(key):
    """Public expected values are snapshotted for student releases: no random generator in public checks."""
    path = GRADERS / "public" / f"test_{key}.py"
    if not path.is_file():
        pytest.skip("no public graders yet")
    tree = ast.parse(path.read_text())
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        args = {a.arg for a in fn.args.args}
        assert not args & {"rng", "seed"}, f"public check {fn.name} uses random inputs"


ALLOWED_IMPORTS = {"torch", "math", "pytest", "autograder", "__future__", "itertools", "functools", "dataclasses"}


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
