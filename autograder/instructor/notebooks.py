"""Generate ``notebooks/``: one Jupyter notebook per stage for learners who prefer notebooks to files.

Everything comes from the one source, ``solutions/`` and ``course.yml``:

* the teaching text is the stage's ``summary`` from course.yml and the solution module's docstring, as markdown;
* the code cell is the stub (``autograder.instructor.generate.strip_solution``: the same TODOs as ``exercises/``);
* the hints from course.yml sit in collapsed ``<details>`` blocks, to open one at a time;
* the last cell checks the stage in place (:func:`autograder.inprocess.check_stage`: the same graders as
  ``python -m autograder check``, run on the kernel's devices) and shows the progress table.

The helpers that cut a solution module into teaching text and code are shared with the nbgrader build
(:mod:`autograder.instructor.nbgrader_build`). Output is deterministic (fixed cell ids, sorted keys), so a test can tell when
the committed notebooks are stale: ``python -m autograder.instructor.notebooks --check``.
"""

from __future__ import annotations

import ast
import html
import re
import sys
import textwrap
from pathlib import Path

from ..course import Course, Stage, load_course
from .generate import SOLUTIONS_DIR, TODO_WIDTH, _analyse, generator_main, strip_solution, sync_generated

NOTEBOOKS_DIR = "notebooks"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
GENERATOR_KEY = "autograder"  # notebook metadata: {"autograder": {"stage": key, "generated_from": path, ...}}


# -- cutting a solution module into parts ---------------------------------------------------------------
def split_docstring(source: str) -> tuple[str, str]:
    """(module docstring, the code after it). The code keeps its imports; leading blank lines are dropped."""
    tree = ast.parse(source)
    doc = ast.get_docstring(tree, clean=True) or ""
    body = source
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        end = first.end_lineno or first.lineno
        body = "".join(source.splitlines(keepends=True)[end:])
    return doc, body.strip("\n") + "\n"


def _strip_header_comments(code: str) -> str:
    """Drop the comment lines generate.py puts above the module (they name files a notebook does not have)."""
    lines = code.splitlines(keepends=True)
    while lines and lines[0].startswith("# Generated from "):
        lines.pop(0)
    return "".join(lines)


def solution_source(course: Course, stage: Stage) -> str:
    path = course.root / SOLUTIONS_DIR / stage.file
    return path.read_text(encoding="utf-8")


def stub_code(source: str, filename: str) -> str:
    """The learner's starting code: the stub without its module docstring."""
    return split_docstring(_strip_header_comments(strip_solution(source, filename)))[1]


def solution_code(source: str) -> str:
    """The reference code without its module docstring, markers kept."""
    return split_docstring(source)[1]


def nbgrader_solution_code(source: str, filename: str) -> str:
    """The reference code for an nbgrader solution cell.

    nbgrader replaces each ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region with its own stub, so the
    course's ``# stub:`` message (what the learner must write) moves onto ``# TODO:`` comment lines above the
    BEGIN marker, where the release keeps it; the marker itself becomes the plain nbgrader one."""
    regions, messages = _analyse(source, filename)
    lines = source.splitlines(keepends=True)
    for region in reversed(regions):
        todo = textwrap.wrap(
            messages[region.begin],
            width=max(TODO_WIDTH - len(region.indent), 40),
            initial_indent="# TODO: ",
            subsequent_indent="#       ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        lines[region.begin - 1 : region.begin] = [f"{region.indent}{t}\n" for t in todo] + [
            f"{region.indent}### BEGIN SOLUTION\n"
        ]
    return split_docstring("".join(lines))[1]


# -- teaching text ----------------------------------------------------------------------------------------
def docstring_markdown(doc: str) -> str:
    """A solution docstring as markdown. Its first line ("Stage N - ...") repeats the title and is dropped;
    indented blocks stay indented, which markdown shows as code; ``double backticks`` are already code spans."""
    lines = doc.strip("\n").splitlines()
    if lines and lines[0].lower().startswith("stage "):
        lines = lines[1:]
    return "\n".join(_escape_inner_stars(line) for line in lines).strip("\n")


def _escape_inner_stars(line: str) -> str:
    """``h*hs`` is a product in a docstring, but markdown pairs such stars into emphasis: escape a star between
    two non-spaces, outside ``code`` spans and indented code blocks (``*word*`` emphasis is left alone)."""
    if line.startswith("    ") or "*" not in line:
        return line
    parts = re.split(r"(``.*?``)", line)
    return "".join(
        part if part.startswith("``") else re.sub(r"(?<=[^\s*])\*(?=[^\s*])", r"\\*", part) for part in parts
    )


def teaching_markdown(course: Course, stage: Stage, doc: str) -> str:
    parts = [f"# Stage {stage.number} of {course.stages[-1].number}: {stage.title}", ""]
    if stage.summary:
        parts += [f"> {stage.summary}", ""]
    body = docstring_markdown(doc)
    if body:
        parts += [body, ""]
    if stage.functions:
        names = ", ".join(f"`{name}`" for name in stage.functions)
        parts += [
            f"**You write:** {names}. Inputs may sit on any device and have any float dtype: results keep "
            "the input's device and dtype, and inputs are never modified.",
            "",
        ]
    return "\n".join(parts).rstrip() + "\n"


def _markdown_text(text: str) -> str:
    """Plain text (as course.yml's hints are written for the terminal) that markdown shows as it is."""
    return re.sub(r"([\\`*_\[\]])", r"\\\1", html.escape(text, quote=False))


def hints_markdown(stage: Stage) -> str:
    lines = ["### Hints", "", "Stuck? Open one hint at a time: each gives away a little more than the last.", ""]
    for i, hint in enumerate(stage.hints, 1):
        lines += [
            f"<details><summary>Hint {i} of {len(stage.hints)}</summary>",
            "",
            _markdown_text(hint),
            "",
            "</details>",
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


# -- notebooks ----------------------------------------------------------------------------------------------
def new_notebook(cells: list, metadata: dict):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}, **metadata}
    return nb


def cell(kind: str, source: str, cell_id: str, **metadata):
    import nbformat

    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    c = make(source=source.rstrip("\n"), id=cell_id)
    if metadata:
        c.metadata.update(metadata)
    return c


def notebook_name(stage: Stage) -> str:
    return Path(stage.file).stem + ".ipynb"


def check_cell_source(stage: Stage) -> str:
    return (
        f"# Check stage {stage.number}: run the cell with your code first (again after every change), "
        "then this one.\n"
        "from autograder.inprocess import check_stage\n\n"
        f'result = check_stage("{stage.key}", globals(), hidden=True)\n'
    )


def render_notebook(course: Course, stage: Stage, *, solved: bool = False):
    """The self-learner notebook of ``stage``; ``solved`` puts the reference code in place of the stub (tests)."""
    source = solution_source(course, stage)
    filename = f"{SOLUTIONS_DIR}/{stage.file}"
    doc, _ = split_docstring(source)
    code = solution_code(source) if solved else stub_code(source, filename)
    how = (
        "Write your code in the next cell where the `TODO`s are, run that cell, then run the check cell at the "
        "bottom. The checks are the course's own graders, run on every device this kernel can use "
        "(CPU, and CUDA or MPS when present)."
    )
    cells = [
        cell("markdown", teaching_markdown(course, stage, doc) + "\n" + how, f"{stage.key}-text"),
        cell("code", code, f"{stage.key}-code"),
        cell("markdown", hints_markdown(stage), f"{stage.key}-hints"),
        cell("code", check_cell_source(stage), f"{stage.key}-check"),
    ]
    meta = {GENERATOR_KEY: {"stage": stage.key, "generated_from": filename, "kind": "self-study"}}
    return new_notebook(cells, meta)


def dumps(nb) -> str:
    import nbformat

    return nbformat.writes(nb) + "\n"


def render_notebooks(root: Path | None = None, course: Course | None = None) -> dict[str, str]:
    """Every self-learner notebook: file name in ``notebooks/`` -> text."""
    course = course or load_course(Path(root) / "course.yml" if root else None)
    return {notebook_name(stage): dumps(render_notebook(course, stage)) for stage in course.stages}


def _generated(path: Path) -> bool:
    import json

    try:
        return GENERATOR_KEY in json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError, AttributeError):
        return False


def _orphans(folder: Path, rendered: dict[str, str]) -> list[Path]:
    return [p for p in sorted(folder.glob("*.ipynb")) if p.name not in rendered and _generated(p)]


def stale_notebooks(root: Path | None = None) -> list[Path]:
    """Notebooks that are missing, differ from a fresh render, or were generated for a stage that is gone."""
    course = load_course(Path(root) / "course.yml" if root else None)
    folder = course.root / NOTEBOOKS_DIR
    rendered = render_notebooks(course=course)
    stale = [
        folder / name
        for name, text in rendered.items()
        if not (folder / name).is_file() or (folder / name).read_text(encoding="utf-8") != text
    ]
    return stale + _orphans(folder, rendered)


def write_notebooks(root: Path | None = None) -> list[Path]:
    """(Re)write ``notebooks/``; return the paths changed or removed. Unchanged files are not touched."""
    course = load_course(Path(root) / "course.yml" if root else None)
    folder = course.root / NOTEBOOKS_DIR
    rendered = render_notebooks(course=course)
    return sync_generated(folder, rendered, _orphans(folder, rendered))


def main(argv: list[str] | None = None) -> int:
    return generator_main(
        argv,
        prog="python -m autograder.instructor.notebooks",
        what="notebooks",
        description="Generate notebooks/ (one notebook per stage) from solutions/ and course.yml.",
        stale=stale_notebooks,
        write=write_notebooks,
        regenerate="make notebooks",
    )


if __name__ == "__main__":
    sys.exit(main())
