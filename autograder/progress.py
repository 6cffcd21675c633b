"""The learner's progress: one store for ``check``, ``hint`` and the notebooks' check cells.

The store is ``.autograder/`` in the course's folder (beside course.yml; ``$AUTOGRADER_STATE`` names another
folder), so ``check`` run from the repository and a check cell run from ``notebooks/`` read and write the same
files:

* ``progress.json``: stage key -> the latest result of that stage (:meth:`StageResult.to_json`), whoever checked it;
* ``hints.json``: stage key -> the numbers of the hints shown, in the order they were shown.

Every change reads, updates and rewrites a file under a lock (``.<file>.lock``, beside it), so check cells run
at the same time (two notebooks, ``watch`` and a notebook) never lose each other's results.

Which hint comes next is decided here too (:func:`next_hint`): the one course.yml's ``hint_for`` names for the
latest failure of the stage (its known mistake first, then the check's name), else the next one in order.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock, Timeout

from .course import Course, Stage
from .results import CheckResult, StageResult, SubmissionResult

STATE_ENV = "AUTOGRADER_STATE"
PROGRESS = "progress.json"
HINTS = "hints.json"


def state_dir(course: Course) -> Path:
    return Path(os.environ.get(STATE_ENV) or course.root / ".autograder")


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _update(path: Path, change: Callable[[dict], dict]) -> None:
    """Rewrite ``path`` with ``change(its data)``, holding the file's lock from the read to the rename; the new
    data is written aside, then renamed, so a reader never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(path.with_name(f".{path.name}.lock"), timeout=30):
            aside = path.with_name(f".{path.name}.{os.getpid()}")
            aside.write_text(json.dumps(change(_read(path)), indent=1))
            os.replace(aside, path)
    except (OSError, Timeout):
        pass  # a read-only folder (or a lock never released): progress is not remembered, the output is unchanged


def load_progress(course: Course) -> dict[str, dict]:
    """Stage key -> the stage's latest result as JSON."""
    return {k: v for k, v in _read(state_dir(course) / PROGRESS).items() if isinstance(v, dict)}


def record(course: Course, stages: list[StageResult]) -> None:
    """Remember these results as the latest of their stages."""
    _update(state_dir(course) / PROGRESS, lambda data: {**data, **{s.key: s.to_json() for s in stages}})


def progress_result(course: Course, progress: dict[str, dict] | None = None) -> SubmissionResult:
    """Every stage's latest result (those never checked marked as such): the progress table's data."""
    progress = load_progress(course) if progress is None else progress
    stages = []
    for stage in course.stages:
        if stage.key in progress:
            try:
                data = dict(progress[stage.key], title=stage.title, max_score=stage.points)
                stages.append(SubmissionResult.from_json({"student": "", "stages": [data]}).stages[0])
                continue
            except (KeyError, TypeError, ValueError):
                pass
        stages.append(
            StageResult(
                key=stage.key, title=stage.title, max_score=stage.points, status="missing", note="not checked yet"
            )
        )
    return SubmissionResult(student="your progress", stages=stages)


def latest(course: Course, key: str) -> StageResult | None:
    result = progress_result(course)
    stage = next(s for s in result.stages if s.key == key)
    return None if stage.status == "missing" and not stage.checks else stage


# -- hints ---------------------------------------------------------------------------------------------------
def hints_shown(course: Course) -> dict[str, list[int]]:
    """Stage key -> the numbers (1-based) of the hints shown so far, oldest first."""
    return _hints(_read(state_dir(course) / HINTS))


def _hints(data: dict) -> dict[str, list[int]]:
    shown: dict[str, list[int]] = {}
    for key, value in data.items():
        if isinstance(value, int):  # a count: the first hints in order
            shown[key] = list(range(1, value + 1))
        elif isinstance(value, list):
            shown[key] = [n for n in value if isinstance(n, int)]
    return shown


def mark_shown(course: Course, key: str, number: int) -> None:
    def change(data: dict) -> dict:
        shown = _hints(data)
        if number not in shown.setdefault(key, []):
            shown[key].append(number)
        return shown

    _update(state_dir(course) / HINTS, change)


def answerable(result: StageResult) -> list[CheckResult]:
    """The failures a hint may answer: those of a stage whose code ran (not one that is missing, does not import
    or is not implemented yet: every check fails the same way there, and the first hint is the answer)."""
    return [c for c in result.checks if not c.passed] if result.status == "graded" else []


def answering(stage: Stage, failures: list[CheckResult]) -> list[tuple[int, str]]:
    """The hints course.yml names (``hint_for``) for these failures, with what each answers ("the known mistake
    X", "the failing check Y"): known mistakes first, then check names."""
    found: list[tuple[int, str]] = []
    for field, label in (("mistake", "the known mistake"), ("name", "the failing check")):
        for failure in failures:
            text = getattr(failure, field) or ""
            for pattern, number in stage.hint_for:
                if text and pattern.lower() in text.lower() and number not in [n for n, _ in found]:
                    found.append((number, f'{label} "{text}"'))
    return found


def next_hint(stage: Stage, shown: list[int], failures: list[CheckResult]) -> tuple[int, str | None] | None:
    """The hint to show next and what it answers: one that answers a failure and is not shown yet, else the first
    not shown yet (answering nothing in particular); None when every hint is shown."""
    for number, about in answering(stage, failures):
        if number not in shown:
            return number, about
    rest = [n for n in range(1, len(stage.hints) + 1) if n not in shown]
    return (rest[0], None) if rest else None
