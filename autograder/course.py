"""course.yml: the course manifest, loaded and validated once, then handed to everything downstream.

course.yml is the single source of truth for the stages: their keys, order, files, points and hints. Adding a
stage means a course.yml entry, ``solutions/<file>``, ``autograder/oracles/<key>.py`` and the graders
``autograder/graders/{public,hidden}/test_<key>.py`` (tests/test_graders_structure.py checks all four).
CURRICULUM.md documents the contract for learners and authors.

Which stages a class gets is course.yml's ``select``: ``all`` (the default), a track (each stage names its
``track``, ``core`` unless it says otherwise), a stage key, or a list of these. Only the selected stages are in
:attr:`Course.stages`, so every generated artefact (stubs, notebooks, the nbgrader course, the student release,
the Gradescope zip) and every check and grade follows the selection; a stage keeps its number (its position in
the full list, which its file name carries) whichever stages are selected.

Data flows one way: ``course.yml`` → graders → runner → results → reports. Every error names the file and the
field, e.g. ``course.yml: stages[3].points: must be a positive integer (got -2)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
_KEY = re.compile(r"[a-z_][a-z0-9_]*")


class CourseError(ValueError):
    """A malformed course.yml: the message names the file and the field."""


@dataclass(frozen=True)
class Stage:
    key: str
    file: str
    title: str
    points: int
    hints: tuple[str, ...]
    functions: tuple[str, ...] = ()
    summary: str = ""
    index: int = 0
    track: str = "core"
    by_hand: bool = False  # the stage must be written by hand: fused attention kernels are off in its sandbox
    # (pattern, hint number): the hint that answers a failing check whose known mistake or name contains pattern
    hint_for: tuple[tuple[str, int], ...] = ()

    @property
    def number(self) -> int:
        return self.index + 1


@dataclass(frozen=True)
class Course:
    path: Path
    id: str
    title: str
    stages: tuple[Stage, ...]  # the selected stages, in course order
    root: Path = field(default=ROOT)
    all_stages: tuple[Stage, ...] = ()  # every stage course.yml defines, selected or not

    @property
    def keys(self) -> list[str]:
        return [s.key for s in self.stages]

    def stage(self, key: str) -> Stage:
        """The stage with this key, or with this number ("6": a key never starts with a digit)."""
        for s in self.stages:
            if s.key == key or (isinstance(key, str) and key.isdigit() and int(key) == s.number):
                return s
        raise KeyError(f"unknown stage {key!r}; stages are: {', '.join(f'{s.number} {s.key}' for s in self.stages)}")

    def by_file(self, name: str) -> Stage | None:
        for s in self.stages:
            if s.file == name:
                return s
        return None

    @property
    def max_score(self) -> int:
        return sum(s.points for s in self.stages)


def _err(path: Path, where: str, problem: str) -> CourseError:
    return CourseError(f"{path.name if path.name else path}: {where}: {problem}")


SELECT_ALL = "all"


def load_course(
    path: str | Path | None = None, *, check_files: bool = True, select: str | list[str] | None = None
) -> Course:
    """Read and validate a course manifest. ``check_files`` also requires each selected stage's file to exist in
    ``solutions/`` or ``exercises/`` beside the manifest. ``select``, when given, replaces the manifest's own
    ``select`` (the command line's ``--select``), with the same meaning and the same errors."""
    path = Path(path) if path is not None else ROOT / "course.yml"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CourseError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "YAML"
        raise _err(path, where, f"not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    if not isinstance(data, dict):
        raise _err(path, "top level", "must be a mapping with a 'stages' list")
    stages_raw = data.get("stages")
    if not isinstance(stages_raw, list) or not stages_raw:
        raise _err(path, "stages", "missing or empty: a list of stages in course order is required")
    root = path.resolve().parent
    stages: list[Stage] = []
    seen_keys: set[str] = set()
    seen_files: set[str] = set()
    for i, raw in enumerate(stages_raw):
        where = f"stages[{i}]"
        if not isinstance(raw, dict):
            raise _err(path, where, "must be a mapping")
        for required in ("key", "file", "title", "points", "hints"):
            if required not in raw:
                raise _err(path, f"{where}.{required}", "missing")
        key = raw["key"]
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise _err(
                path,
                f"{where}.key",
                f"must be an identifier of lowercase letters, digits and '_' "
                f"(it names the oracle and grader modules; got {key!r})",
            )
        if key in seen_keys:
            raise _err(path, f"{where}.key", f"stage {key!r} appears twice")
        seen_keys.add(key)
        file = raw["file"]
        if not isinstance(file, str) or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.py", file):
            raise _err(path, f"{where}.file", f"must be a plain .py file name (got {file!r})")
        if file in seen_files:
            raise _err(path, f"{where}.file", f"{file!r} is used by two stages")
        seen_files.add(file)
        numbered = re.match(r"(\d+)_", file)
        if numbered and int(numbered.group(1)) != i + 1:
            raise _err(
                path,
                f"{where}.file",
                f"{file!r} is numbered {int(numbered.group(1))} but is stage {i + 1}: "
                f"a numbered file's prefix must be its position in the course",
            )
        points = raw["points"]
        if isinstance(points, bool) or not isinstance(points, int) or points <= 0:
            raise _err(path, f"{where}.points", f"must be a positive integer (got {points!r})")
        title = raw["title"]
        if not isinstance(title, str) or not title.strip():
            raise _err(path, f"{where}.title", "must be a non-empty string")
        hints = raw["hints"]
        if not isinstance(hints, list) or not hints or not all(isinstance(h, str) and h.strip() for h in hints):
            raise _err(path, f"{where}.hints", "must be a non-empty list of strings, gentle first")
        hint_for = raw.get("hint_for", {})
        if not isinstance(hint_for, dict) or not all(
            isinstance(p, str) and p.strip() and isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= len(hints)
            for p, n in hint_for.items()
        ):
            raise _err(
                path,
                f"{where}.hint_for",
                f"must map a known mistake or check name (or part of one) to "
                f"the number of the hint that answers it, 1 to {len(hints)}",
            )
        functions = raw.get("functions", [])
        if not isinstance(functions, list) or not all(isinstance(f, str) for f in functions):
            raise _err(path, f"{where}.functions", "must be a list of names")
        summary = raw.get("summary", "")
        if not isinstance(summary, str):
            raise _err(path, f"{where}.summary", "must be a string")
        track = raw.get("track", "core")
        if not isinstance(track, str) or not _KEY.fullmatch(track) or track in (SELECT_ALL, key):
            raise _err(
                path,
                f"{where}.track",
                f"must be an identifier other than 'all' and the stage's key, naming "
                f"the track the stage belongs to (got {track!r})",
            )
        by_hand = raw.get("by_hand", False)
        if not isinstance(by_hand, bool):
            raise _err(path, f"{where}.by_hand", f"must be true or false (got {by_hand!r})")
        stages.append(
            Stage(
                key=key,
                file=file,
                title=title.strip(),
                points=points,
                hints=tuple(h.strip() for h in hints),
                functions=tuple(functions),
                summary=summary.strip(),
                index=i,
                track=track,
                by_hand=by_hand,
                hint_for=tuple((p.strip(), n) for p, n in hint_for.items()),
            )
        )
    selected = _select(path, select if select is not None else data.get("select", SELECT_ALL), stages)
    for s in selected:
        if check_files and not any((root / d / s.file).is_file() for d in ("solutions", "exercises")):
            raise _err(path, f"stages[{s.index}].file", f"{s.file!r} exists in neither solutions/ nor exercises/")
    course_id = data.get("course", "attention")
    if not isinstance(course_id, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", course_id):
        raise _err(path, "course", f"must be an identifier of letters, digits, '-' and '_' (got {course_id!r})")
    title = data.get("title", "Self-attention from scratch")
    return Course(
        path=path.resolve(), id=course_id, title=str(title), stages=tuple(selected), root=root, all_stages=tuple(stages)
    )


def _select(path: Path, select, stages: list[Stage]) -> list[Stage]:
    """The stages ``select`` names (see the module's docstring), in course order."""
    items = [select] if isinstance(select, str) else select
    if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
        raise _err(path, "select", f"must be 'all', a track, a stage key, or a non-empty list of them (got {select!r})")
    tracks = {s.track for s in stages}
    keys = {s.key for s in stages}
    for n, item in enumerate(items):
        if item != SELECT_ALL and item not in tracks and item not in keys:
            where = "select" if isinstance(select, str) else f"select[{n}]"
            raise _err(
                path,
                where,
                f"{item!r} is neither 'all', a track ({', '.join(sorted(tracks))}) nor a stage "
                f"key ({', '.join(s.key for s in stages)})",
            )
    chosen = [s for s in stages if SELECT_ALL in items or s.track in items or s.key in items]
    return chosen
