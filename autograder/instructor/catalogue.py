"""The mistake catalogue (``tests/mistakes/``): realistic wrong stage files, derived from the solutions.

A catalogue file is named ``<stage key>__<what>.py``; its docstring's first line is ``MISTAKE: <name>`` (the known
mistake the feedback must name, or ``none``). Two forms:

- a short stand-alone learner file (the file *is* the learner's source), or
- the stage's solution with edits: the file defines ``EDITS = [(old, new), ...]``. The learner's source is the
  solution with the file's docstring put first, then each edit applied in order; every ``old`` must occur exactly
  once, so a change to a solution that an edit no longer fits fails loudly instead of testing stale code.

Used by the project's tests, the student release (to record failure paths) and the bench. Instructor-only.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = Path("tests") / "mistakes"


def mistake_files(root: Path = ROOT) -> list[Path]:
    return sorted((root / CATALOGUE).glob("*__*.py"))


def _edits(tree: ast.Module, path: Path) -> list[tuple[str, str]] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EDITS" for t in node.targets):
            edits = ast.literal_eval(node.value)
            if not all(isinstance(e, tuple) and len(e) == 2 and all(isinstance(s, str) for s in e) for e in edits):
                raise ValueError(f"{path.name}: EDITS must be a list of (old, new) string pairs")
            return edits
    return None


def mistake_source(path: Path, root: Path = ROOT) -> str:
    """The learner source a catalogue file stands for."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    edits = _edits(tree, path)
    if edits is None:
        return text
    key = path.name.split("__")[0]
    solutions = [p for p in (root / "solutions").glob("*.py") if p.stem.split("_", 1)[-1] == key]
    if len(solutions) != 1:
        raise ValueError(f"{path.name}: no single solution file for stage {key!r}")
    solution = solutions[0].read_text(encoding="utf-8")
    if not solution.startswith('"""'):
        raise ValueError(f"{solutions[0].name}: a solution must start with its module docstring")
    source = '"""' + (ast.get_docstring(tree, clean=False) or "").rstrip() + "\n\n" + solution[3:]
    for i, (old, new) in enumerate(edits):
        count = source.count(old)
        if count != 1:
            raise ValueError(
                f"{path.name}: edit {i + 1} expects its old text exactly once in "
                f"{solutions[0].name}, found it {count} times (was the solution changed?)"
            )
        source = source.replace(old, new, 1)
    return source
