"""Generate the learner stubs in ``exercises/`` from the reference code in ``solutions/``.

Every solution file marks the code a learner must write::

    def f(x):
        \"\"\"Docstring the learner keeps.\"\"\"
        ### BEGIN SOLUTION  # stub: optional message telling the learner what to do
        ...reference code...
        ### END SOLUTION

In the generated exercise each marked region becomes, at the marker's
indentation::

        # TODO: <message, wrapped over several comment lines if long>
        raise NotImplementedError("<message>")

The message is the ``# stub:`` text when there is one, otherwise it is derived
from the enclosing function (or method) name and the first line of its
docstring. Everything outside the markers (imports, signatures, docstrings,
class skeletons, ``super().__init__()``) is copied unchanged, so a stub module
imports cleanly and its functions raise ``NotImplementedError`` when called.

Rules, enforced with a ``ValueError`` that names the file and line:
markers are whole-line comments; they do not nest; every BEGIN has an END at
the same indentation; at most one region per function; a region outside any
function needs a ``# stub:`` message; and the generated stub must parse.

Run ``python -m autograder.instructor.generate`` to (re)write ``exercises/``, or
``python -m autograder.instructor.generate --check`` to only report stale files (exit 1).
Only the stages course.yml selects are rendered (a generated stub of another stage is removed). This module
uses the standard library and course.yml's loader (PyYAML): it never imports torch.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import textwrap
import tokenize
from pathlib import Path
from typing import NamedTuple

SOLUTIONS_DIR = "solutions"
EXERCISES_DIR = "exercises"
TODO_WIDTH = 88  # the TODO comment is wrapped to this many columns

HEADER = "# Generated from solutions/{name} by `make exercises`; edit the solution, not this file.\n"
_HEADER_PREFIX = "# Generated from solutions/"

_BEGIN_RE = re.compile(r"^### BEGIN SOLUTION(?:\s+#\s*stub:\s*(?P<msg>.*?))?\s*$")
_END_RE = re.compile(r"^### END SOLUTION\s*$")
_ANY_MARKER_RE = re.compile(r"(BEGIN|END)\s+SOLUTION", re.IGNORECASE)


class Region(NamedTuple):
    """One marked region. Line numbers are 1-based and point at the marker lines."""

    begin: int
    end: int
    indent: str
    message: str | None  # the ``# stub:`` text, if any


def _default_root() -> Path:
    return Path(__file__).resolve().parents[2]


def _comment_lines(source: str, filename: str) -> list[tuple[int, str, str]]:
    """(line number, indentation, comment text) for every comment alone on its line."""
    lines = source.splitlines()
    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type != tokenize.COMMENT:
                continue
            row, col = tok.start
            prefix = lines[row - 1][:col]
            if prefix.strip() == "":
                found.append((row, prefix, tok.string))
            elif _ANY_MARKER_RE.search(tok.string):
                raise ValueError(
                    f"{filename}:{row}: solution marker after code on the same line; "
                    f"markers must be comments on a line of their own"
                )
    except (tokenize.TokenError, SyntaxError) as exc:
        raise ValueError(f"{filename}: cannot tokenize solution source: {exc}") from exc
    return found


def _find_regions(source: str, filename: str) -> list[Region]:
    regions: list[Region] = []
    open_at: tuple[int, str, str | None] | None = None
    for row, indent, comment in _comment_lines(source, filename):
        begin = _BEGIN_RE.match(comment)
        end = _END_RE.match(comment)
        if begin:
            if open_at is not None:
                raise ValueError(
                    f"{filename}:{row}: '### BEGIN SOLUTION' inside the region opened at "
                    f"line {open_at[0]}; regions cannot nest (add '### END SOLUTION' first)"
                )
            msg = begin.group("msg")
            if msg is not None and not msg.strip():
                raise ValueError(f"{filename}:{row}: empty '# stub:' message")
            open_at = (row, indent, msg)
        elif end:
            if open_at is None:
                raise ValueError(f"{filename}:{row}: '### END SOLUTION' without a matching '### BEGIN SOLUTION'")
            if indent != open_at[1]:
                raise ValueError(
                    f"{filename}:{row}: '### END SOLUTION' is indented differently from the "
                    f"'### BEGIN SOLUTION' at line {open_at[0]}"
                )
            regions.append(Region(open_at[0], row, open_at[1], open_at[2]))
            open_at = None
        elif _ANY_MARKER_RE.search(comment):
            raise ValueError(
                f"{filename}:{row}: malformed solution marker {comment!r}; write exactly "
                f"'### BEGIN SOLUTION' (optionally '  # stub: <message>') or '### END SOLUTION'"
            )
    if open_at is not None:
        raise ValueError(f"{filename}:{open_at[0]}: '### BEGIN SOLUTION' is never closed by '### END SOLUTION'")
    return regions


_Def = ast.FunctionDef | ast.AsyncFunctionDef


def _enclosing_defs(tree: ast.AST) -> list[tuple[_Def, str, ast.ClassDef | None]]:
    """Every function in the module as (node, qualified name, enclosing class or None)."""
    out: list[tuple[_Def, str, ast.ClassDef | None]] = []

    def visit(node: ast.AST, prefix: str, cls: ast.ClassDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((child, prefix + child.name, cls))
                visit(child, prefix + child.name + ".", None)
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".", child)
            else:
                visit(child, prefix, cls)

    visit(tree, "", None)
    return out


def _first_doc_line(node: ast.AST) -> str:
    doc = ast.get_docstring(node)  # type: ignore[arg-type]
    if not doc:
        return ""
    return doc.strip().splitlines()[0].strip()


def _default_message(region: Region, filename: str, owner_of: dict) -> str:
    owner = owner_of.get(region.begin)
    if owner is None:
        raise ValueError(
            f"{filename}:{region.begin}: a region outside any function needs a message: "
            f"'### BEGIN SOLUTION  # stub: <what to write>'"
        )
    node, qualname, cls = owner
    summary = _first_doc_line(node)
    if not summary and cls is not None and node.name == "__init__":
        summary = _first_doc_line(cls)
    if summary:
        return f"Implement {qualname}: {summary.rstrip('.')}"
    return f"Implement {qualname} (see the module docstring)"


def _py_string(text: str) -> str:
    """A Python string literal holding ``text``, double-quoted when that needs no escapes."""
    if text.isprintable() and "\\" not in text and '"' not in text:
        return f'"{text}"'
    return repr(text)


def _first_code_line(lines: list[str], region: Region) -> int | None:
    """1-based number of the first line of code (not blank, not comment) inside a region."""
    for number in range(region.begin + 1, region.end):
        text = lines[number - 1].strip()
        if text and not text.startswith("#"):
            return number
    return None


def _analyse(source: str, filename: str) -> tuple[list[Region], dict[int, str]]:
    """Find the regions and the stub message of each (keyed by BEGIN line)."""
    regions = _find_regions(source, filename)
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise ValueError(f"{filename}:{exc.lineno}: solution does not parse: {exc.msg}") from exc
    defs = _enclosing_defs(tree)
    lines = source.splitlines()
    owner_of: dict[int, tuple] = {}
    seen: dict[str, int] = {}
    for region in regions:
        # The innermost function whose body contains the region's code. (The END
        # marker itself may come after the function's last statement.)
        first_code = _first_code_line(lines, region)
        if first_code is None:
            raise ValueError(f"{filename}:{region.begin}: empty solution region (no code between the markers)")
        best = None
        for node, qualname, cls in defs:
            if node.lineno < region.begin and first_code <= (node.end_lineno or node.lineno):
                if best is None or node.lineno > best[0].lineno:
                    best = (node, qualname, cls)
        if best is not None:
            owner_of[region.begin] = best
            qualname = best[1]
            if qualname in seen:
                raise ValueError(
                    f"{filename}:{region.begin}: second solution region in {qualname} "
                    f"(first at line {seen[qualname]}); use at most one region per function"
                )
            seen[qualname] = region.begin
    messages = {}
    for region in regions:
        if region.message and region.begin in owner_of:
            msg = f"Implement {owner_of[region.begin][1]}: {region.message}"
        else:
            msg = region.message or _default_message(region, filename, owner_of)
        messages[region.begin] = " ".join(msg.split())
    return regions, messages


def strip_solution(source: str, filename: str) -> str:
    """Return ``source`` with every marked region replaced by a TODO and a raise.

    ``filename`` is used in error messages only. Raises ``ValueError`` naming the
    file and line for unbalanced, nested or malformed markers, and when the
    resulting stub would not parse.
    """
    regions, messages = _analyse(source, filename)
    lines = source.splitlines(keepends=True)
    out: list[str] = []
    cursor = 0  # 0-based index of the next line to copy
    for region in regions:
        out.extend(lines[cursor : region.begin - 1])
        msg = messages[region.begin]
        todo = textwrap.wrap(
            msg,
            width=max(TODO_WIDTH - len(region.indent), 40),
            initial_indent="# TODO: ",
            subsequent_indent="#       ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        out.extend(f"{region.indent}{line}\n" for line in todo)
        out.append(f"{region.indent}raise NotImplementedError({_py_string(msg)})\n")
        cursor = region.end  # skip through the END marker line
    out.extend(lines[cursor:])
    stub = "".join(out)
    try:
        ast.parse(stub, filename=filename)
    except SyntaxError as exc:
        raise ValueError(
            f"{filename}:{exc.lineno}: the generated stub does not parse ({exc.msg}); "
            f"check that each region covers whole statements"
        ) from exc
    return stub


def solution_regions(source: str) -> list[str]:
    """The code inside every marked region (markers excluded), dedented, in file order.

    Used to scan release artefacts for leaked reference code.
    """
    regions = _find_regions(source, "<source>")
    lines = source.splitlines(keepends=True)
    return [textwrap.dedent("".join(lines[r.begin : r.end - 1])) for r in regions]


def _solution_files(course_root: Path) -> list[Path]:
    sol_dir = Path(course_root) / SOLUTIONS_DIR
    return sorted(p for p in sol_dir.glob("*.py") if p.is_file() and not p.name.startswith("_"))


def selected_files(course_root: Path) -> set[str] | None:
    """The stage files course.yml's ``select`` gives the class (None when the root has no course.yml: all)."""
    manifest = Path(course_root) / "course.yml"
    if not manifest.is_file():
        return None
    from autograder.course import load_course  # PyYAML, never torch

    return {s.file for s in load_course(manifest, check_files=False).stages}


def render_exercises(course_root: Path) -> dict[str, str]:
    """Render the exercise of every selected stage: file name relative to ``exercises/`` -> file text."""
    rendered = {}
    selected = selected_files(course_root)
    for path in _solution_files(course_root):
        if selected is not None and path.name not in selected:
            continue
        source = path.read_text(encoding="utf-8")
        stub = strip_solution(source, f"{SOLUTIONS_DIR}/{path.name}")
        rendered[path.name] = HEADER.format(name=path.name) + stub
    return rendered


def _orphans(course_root: Path, rendered: dict[str, str]) -> list[Path]:
    """Generated exercise files whose solution no longer exists, or whose stage is not selected."""
    ex_dir = Path(course_root) / EXERCISES_DIR
    orphans = []
    for path in sorted(ex_dir.glob("*.py")):
        if path.name in rendered:
            continue
        try:
            first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        except OSError:
            continue
        if first.startswith(_HEADER_PREFIX):
            orphans.append(path)
    return orphans


def stale_exercises(course_root: Path) -> list[Path]:
    """Exercise files that are missing, differ from a fresh render, or are orphaned."""
    course_root = Path(course_root)
    rendered = render_exercises(course_root)
    stale = []
    for name, text in rendered.items():
        path = course_root / EXERCISES_DIR / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(path)
    return stale + _orphans(course_root, rendered)


def write_exercises(course_root: Path) -> list[Path]:
    """(Re)write ``exercises/`` from ``solutions/``; return the paths changed or removed.

    Files are only rewritten when their content changes. Generated files whose
    solution was removed are deleted; other files in ``exercises/`` are left alone.
    """
    course_root = Path(course_root)
    rendered = render_exercises(course_root)  # render all first: fail before writing anything
    return sync_generated(course_root / EXERCISES_DIR, rendered, _orphans(course_root, rendered))


def sync_generated(folder: Path, rendered: dict[str, str], orphans: list[Path]) -> list[Path]:
    """Bring a generated folder in line with ``rendered`` (name → text): write what differs, delete ``orphans``
    (generated files whose source is gone). Unchanged files are not touched. Returns the paths changed."""
    folder.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in rendered.items():
        path = folder / name
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        path.write_text(text, encoding="utf-8")
        changed.append(path)
    for path in orphans:
        path.unlink()
        changed.append(path)
    return changed


def generator_main(
    argv: list[str] | None,
    *,
    prog: str,
    what: str,
    description: str,
    stale,
    write,
    regenerate: str,
    default_root: Path | None = None,
) -> int:
    """The command line of a generator of ``what`` (a folder made from course.yml and solutions/): write what
    changed, or with ``--check`` list what is stale and exit 1. ``stale(root)`` and ``write(root)`` return
    paths; a ``ValueError`` (a course or marker error, naming the file and line) exits 2."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--root", type=Path, default=default_root, help="course root (default: this repository)")
    parser.add_argument("--check", action="store_true", help=f"only report stale {what}; exit 1 if any")
    args = parser.parse_args(argv)
    try:
        if args.check:
            found = stale(args.root)
            for path in found:
                print(f"stale: {path}")
            if found:
                print(f"run `{regenerate}` to regenerate", file=sys.stderr)
            return 1 if found else 0
        changed = write(args.root)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in changed:
        print(f"wrote {path}" if path.exists() else f"removed {path}")
    if not changed:
        print(f"{what} are up to date")
    return 0


def main(argv: list[str] | None = None) -> int:
    return generator_main(
        argv,
        prog="python -m autograder.instructor.generate",
        what="exercises",
        description="Generate exercises/ (learner stubs) from solutions/.",
        stale=stale_exercises,
        write=write_exercises,
        regenerate="python -m autograder.instructor.generate",
        default_root=_default_root(),
    )


if __name__ == "__main__":
    sys.exit(main())
