"""No verdict depends on the seed: each file of the mistake catalogue (tests/mistakes/) fails the same checks for
every student, though each student's hidden checks draw other shapes, weights and lengths from their own seed.

A draw that hides a mistake for some students only (a head size of 1, where no scale shows; padded keys that no
query sees; inputs small enough for an unshifted softmax) makes a wrong answer pass a check by luck, or a mistake
cost a second check for some students only. The code here is the project's own (trusted), so it is graded
in-process, as test_margins does, to afford many students.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from autograder.instructor.catalogue import mistake_source
from autograder.runner import Submission, grade
from conftest import in_process

ROOT = Path(__file__).resolve().parent.parent
MISTAKES = sorted((ROOT / "tests" / "mistakes").glob("*__*.py"))
STUDENTS = 8  # each with its own seed for the mistake's stage
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # a catalogue file may use deprecated idioms (x.T)


@pytest.fixture(scope="module")
def failed(course) -> dict[str, dict[str, frozenset]]:
    """Mistake file -> student -> the names of the checks that student's grade failed."""
    subs = []
    for path in MISTAKES:
        stage = course.stage(path.name.split("__")[0])
        source = mistake_source(path, ROOT)
        subs += [Submission(f"{path.stem}#{i}", {stage.key: (stage.file, source)}) for i in range(STUDENTS)]
    open_student = in_process("mistake")

    out: dict[str, dict[str, frozenset]] = defaultdict(dict)
    for stage in course.stages:
        mine = [s for s in subs if stage.key in s.sources]
        for result in grade(course, mine, stages=[stage.key], seed=777, open_student=open_student):
            checks = result.stage(stage.key).checks
            out[result.student.split("#")[0]][result.student] = frozenset(c.name for c in checks if not c.passed)
    return out


@pytest.mark.parametrize("path", MISTAKES, ids=[p.stem for p in MISTAKES])
def test_a_mistake_fails_the_same_checks_for_every_student(failed, path):
    runs = failed[path.stem]
    assert len(runs) == STUDENTS
    always, sometimes = frozenset.intersection(*runs.values()), frozenset.union(*runs.values())
    assert always, f"{path.stem} fails no check for some student"
    assert always == sometimes, f"{path.stem}: failed for some students only: {sorted(sometimes - always)}"
