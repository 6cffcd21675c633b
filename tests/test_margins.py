"""No correct answer ever fails, whatever the seed: the solutions and the correct alternatives of tests/correct/
(other idioms: einsum, logsumexp, finfo.min, torch.where, in-place fills on fresh tensors, the book's
triu(diagonal=1) mask, unflatten/flatten heads) score full marks for many students, that is many seeds.

Every stage's checks already call each function in float32 and float64, and the hidden ones in float16 and
bfloat16: one full mark per student is a margin proven in every precision. The code here is the project's own
(trusted), so it is graded in-process, as a notebook's kernel is, to afford many seeds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.instructor.catalogue import mistake_source
from autograder.runner import Submission, grade
from conftest import in_process

ROOT = Path(__file__).resolve().parent.parent
CORRECT = sorted((ROOT / "tests" / "correct").glob("*__*.py"))
SEEDS = 24  # students per style set, each with its own seeds for every stage


def style_sets(course) -> dict[str, dict[str, str]]:
    """Style set name -> {stage key: source}: the solutions, and as many sets as a stage has alternatives (a
    stage with fewer alternatives repeats its first)."""
    by_stage: dict[str, list[Path]] = {}
    for path in CORRECT:
        by_stage.setdefault(path.name.split("__")[0], []).append(path)
    sets = {"solutions": {s.key: (ROOT / "solutions" / s.file).read_text() for s in course.stages}}
    for i in range(max(len(v) for v in by_stage.values())):
        sets[f"styles{i}"] = {
            s.key: mistake_source(by_stage[s.key][min(i, len(by_stage[s.key]) - 1)], ROOT)
            if s.key in by_stage
            else sets["solutions"][s.key]
            for s in course.stages
        }
    return sets


def test_every_stage_has_a_correct_alternative(course):
    assert {p.name.split("__")[0] for p in CORRECT} == set(course.keys)


@pytest.fixture(scope="module")
def graded(course):
    sets = style_sets(course)
    subs = [
        Submission(f"{name}-{i}", {k: (course.stage(k).file, src) for k, src in sources.items()})
        for name, sources in sets.items()
        for i in range(SEEDS)
    ]
    return grade(course, subs, seed=20240, open_student=in_process("correct"))


def test_correct_answers_score_full_marks_for_every_seed(graded):
    failures = [
        f"{r.student}: {s.key}: {c.name}: {c.message[:300]}"
        for r in graded
        for s in r.stages
        for c in s.checks
        if not c.passed
    ]
    assert not failures, "\n".join(failures)
    assert len(graded) >= 2 * SEEDS
