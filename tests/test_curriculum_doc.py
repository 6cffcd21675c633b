"""CURRICULUM.md, the project's contract document, names every stage, file and public name of course.yml."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "CURRICULUM.md"


def test_curriculum_names_every_stage_file_and_public_name(course):
    text = DOC.read_text(encoding="utf-8")
    quoted = set(re.findall(r"`([^`]+)`", text))
    missing = [
        f"stage {s.key!r}: {what} {name!r}"
        for s in course.stages
        for what, names in (("key", [s.key]), ("file", [s.file]), ("public name", s.functions))
        for name in names
        if name not in quoted
    ]
    assert not missing, "CURRICULUM.md does not mention (in `backticks`):\n" + "\n".join(missing)


def test_nothing_points_outside_the_repository():
    """The contract lives in the project: no file refers to a sibling folder such as ../shared."""
    offenders = []
    for path in ROOT.rglob("*"):
        if any(
            part.startswith(".") or part in {"build", "dist", "out", "__pycache__"} or part.endswith(".egg-info")
            for part in path.relative_to(ROOT).parts
        ):
            continue
        texts = {".py", ".md", ".yml", ".yaml", ".toml", ".cfg", ".txt", ".ipynb"}
        if path.suffix not in texts and path.name != "Makefile":
            continue
        if path == Path(__file__):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if "../shared" in text or "shared/curriculum" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"these files refer to files outside the repository: {offenders}"
