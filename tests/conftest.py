"""Shared fixtures for the project's own tests."""

from __future__ import annotations

import linecache
import shutil
import sys
import types
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def course():
    from autograder.course import load_course

    return load_course(ROOT / "course.yml")


@pytest.fixture(scope="session")
def sandbox():
    """One warm sandbox for the whole test session (bubblewrap when the machine has it)."""
    from autograder.sandbox.host import Limits, Sandbox

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sb = Sandbox(Limits(call_timeout=20)).start()
    yield sb
    sb.close()


@pytest.fixture
def folder_with(tmp_path):
    """folder_with({"02_tril_average.py": text or Path}, base="solutions") → a learner folder."""

    def make(replace: dict | None = None, base: str = "solutions", name: str = "learner") -> Path:
        dest = tmp_path / name
        shutil.copytree(ROOT / base, dest)
        for file, content in (replace or {}).items():
            target = dest / file
            if content is None:
                target.unlink()
            elif isinstance(content, Path):
                shutil.copy(content, target)
            else:
                target.write_text(content)
        return dest

    return make


def in_process(prefix: str):
    """``open_student`` for :func:`autograder.runner.grade` that runs a submission's stage in this process, as a
    notebook's kernel does (for the project's own, trusted files: many students at little cost). One stage of one
    student is kept at a time."""
    from autograder.sandbox.proxy import LocalStudent

    namespaces: dict[tuple[str, str], dict] = {}

    def open_student(sub, stage):
        key = (sub.student, stage.key)
        if key not in namespaces:
            namespaces.clear()
            # a module of its own, and its source where inspect finds it, as the sandbox's executor gives a stage
            # (Executor.load_source): @dataclass looks its module up, torch.jit.script reads the source
            source = sub.sources[stage.key][1]
            module = types.ModuleType(f"{prefix}_{stage.key}")
            module.__file__ = stage.file
            sys.modules[module.__name__] = module
            linecache.cache[stage.file] = (len(source), None, source.splitlines(True), stage.file)
            namespaces[key] = module.__dict__
            exec(compile(source, stage.file, "exec"), namespaces[key])  # noqa: S102 - ours
        return LocalStudent(namespaces[key], filename=stage.file)

    return open_student
