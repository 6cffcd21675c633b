"""Finding a class's submissions on disk, reading only what grading needs.

``CLASS_DIR`` may hold, for each student (the folder name is the student id):

* the stage files named as in ``course.yml`` (``01_loop_average.py`` ...), any subset of them;
* per-stage notebooks named like the stage files (``01_loop_average.ipynb``), as nbgrader collects them;
* one notebook (any name) whose code cells hold every stage;

or ``CLASS_DIR/submitted/<student>/<assignment>/`` (nbgrader's exchange layout), whose assignment folders are
searched the same way. Per stage the first of: the ``.py`` file, the stage's own notebook, the single notebook.

Only those files are opened, each without following links (``O_NOFOLLOW``), only when it is a regular file, and
only up to a size cap. Everything else in a folder (a ``conftest.py``, ``pytest.ini``, ``sitecustomize.py``, a
local ``torch.py``, links, sub-folders) is listed in the student's notes and never read, executed or put on an
import path: the sandbox receives each stage as a string.

A notebook is turned into one source per stage by program slicing, not by running it: the top-level statements
of its code cells are parsed with :mod:`ast`; a stage's source is the last definition of each of the stage's
names (``def``/``class``/assignment), every definition from a cell marked ``# stage: <key>``, and, transitively,
the imports and definitions those refer to (found with :mod:`symtable`, so a function's parameters and locals are
not mistaken for globals). Demo code (prints, plots, calls to the checks) is left out, so a cell that plots or
reads a data file cannot break a stage. A notebook that cannot be read costs only the stages that needed it, with
a note that says why; a code cell that does not parse costs only the stages whose names it defines.

Nothing here imports torch: the class grader's main process only reads files, hashes and writes reports.
"""

from __future__ import annotations

import ast
import errno
import hashlib
import json
import os
import re
import stat
import symtable
from dataclasses import dataclass, field
from pathlib import Path

from ..course import Course, Stage

MAX_SOURCE_BYTES = 1_000_000  # one stage file
MAX_NOTEBOOK_BYTES = 20_000_000  # a notebook, outputs (images) included
MAX_STUDENTS = 10_000
# names in CLASS_DIR or a student folder that are silently skipped (editor and tool droppings, nbgrader's stamp)
QUIET_NAMES = {"__pycache__", ".ipynb_checkpoints", "timestamp.txt", ".DS_Store"}
# output names of `grade`: a student folder with one of these names would clash with them
RESERVED = {"grades.csv", "report.html", "run.json"}
MARKER = re.compile(r"^\s*#\s*stage\s*:\s*([A-Za-z_][A-Za-z0-9_]*)\s*$", re.M)
HELP = re.compile(r"^\??[A-Za-z_][\w.]*\?{0,2}$")  # IPython help: ?name, name?, name??


@dataclass
class Collected:
    """One student's submission as read from disk: plain data (no torch), turned into a runner Submission in
    the grading process. ``notes`` are instructor-facing remarks (ignored files, where a stage came from)."""

    student: str
    sources: dict[str, tuple[str, str]] = field(default_factory=dict)  # stage key → (file name, source)
    problems: dict[str, str] = field(default_factory=dict)  # stage key → why there is no source
    notes: list[str] = field(default_factory=list)
    layout: str = "files"  # files | notebook | stage notebooks | nbgrader | empty

    def submission(self):
        from ..runner import Submission

        return Submission(student=self.student, sources=dict(self.sources), problems=dict(self.problems))

    def content_hash(self) -> str:
        """A hash of everything grading depends on (with the notes, so a changed note is written again)."""
        h = hashlib.sha256(b"collected-v1\0" + self.student.encode("utf-8", "surrogatepass") + b"\0")
        for key in sorted(self.sources):
            name, text = self.sources[key]
            for part in (key, name, text):
                h.update(part.encode("utf-8", "surrogatepass") + b"\0")
        for key in sorted(self.problems):
            h.update(f"!{key}\0{self.problems[key]}\0".encode("utf-8", "surrogatepass"))
        for note in self.notes:
            h.update(f"#{note}\0".encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def to_json(self) -> dict:
        return {
            "student": self.student,
            "sources": {k: list(v) for k, v in self.sources.items()},
            "problems": self.problems,
            "notes": self.notes,
            "layout": self.layout,
        }

    @classmethod
    def from_json(cls, data: dict) -> "Collected":
        return cls(
            student=data["student"],
            sources={k: (v[0], v[1]) for k, v in data["sources"].items()},
            problems=dict(data["problems"]),
            notes=list(data["notes"]),
            layout=data.get("layout", "files"),
        )


class ReadError(Exception):
    """A file that is not read: its ``str()`` says why, for the learner's and the instructor's eyes."""


# ───────────────────────────── reading files safely ─────────────────────────────


def read_capped(path: Path, limit: int) -> bytes:
    """The bytes of a regular file, opened without following a link, at most ``limit`` bytes."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise ReadError(f"{path.name} is a symbolic link: links are not followed") from None
        if exc.errno == errno.ENOENT:
            raise ReadError(f"file missing: {path.name}") from None
        raise ReadError(f"cannot read {path.name}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ReadError(f"{path.name} is not a regular file")
        if st.st_size > limit:
            raise ReadError(f"{path.name} is larger than {limit // 1_000_000} MB")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew while we read it
                raise ReadError(f"{path.name} is larger than {limit // 1_000_000} MB")
        return b"".join(chunks)
    except OSError as exc:
        raise ReadError(f"cannot read {path.name}: {exc.strerror}") from None
    finally:
        os.close(fd)


def decode_source(raw: bytes) -> str:
    return raw.decode("utf-8-sig", errors="replace")


def _listing(folder: Path) -> dict[str, str]:
    """name → kind ('file', 'dir', 'link', 'other') for the entries of a folder, without following links."""
    out = {}
    try:
        with os.scandir(folder) as it:
            for entry in it:
                try:
                    if entry.is_symlink():
                        kind = "link"
                    elif entry.is_dir(follow_symlinks=False):
                        kind = "dir"
                    elif entry.is_file(follow_symlinks=False):
                        kind = "file"
                    else:
                        kind = "other"
                except OSError:
                    kind = "other"
                out[entry.name] = kind
    except OSError:
        pass
    return out


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


# ───────────────────────────── notebooks → per-stage sources ─────────────────────────────


@dataclass
class _Stmt:
    cell: int  # 1-based code cell number
    text: str
    defines: set[str]
    uses: set[str]
    kind: str  # import | def | modify


def notebook_cells(raw: bytes, name: str) -> list[str]:
    """The code cells of a notebook (nbformat 4, or 3's worksheets), as text; ReadError when malformed."""
    try:
        nb = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ReadError(f"{name} is not a readable notebook (invalid JSON: {str(exc)[:120]})") from None
    if not isinstance(nb, dict):
        raise ReadError(f"{name} is not a notebook (no cells)")
    cells = nb.get("cells")
    if cells is None and isinstance(nb.get("worksheets"), list):  # nbformat 3
        cells = [c for ws in nb["worksheets"] if isinstance(ws, dict) for c in (ws.get("cells") or [])]
    if not isinstance(cells, list):
        raise ReadError(f"{name} is not a notebook (no cells)")
    out = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", cell.get("input", ""))
        if isinstance(src, list):
            if not all(isinstance(s, str) for s in src):
                raise ReadError(f"{name}: a code cell's source is not text")
            src = "".join(src)
        if not isinstance(src, str):
            raise ReadError(f"{name}: a code cell's source is not text")
        out.append(src)
    return out


def _strip_magics(src: str) -> str:
    """IPython syntax (``%timeit``, ``!pip``, ``obj?``) becomes a comment, keeping line numbers."""
    if "%" not in src and "!" not in src and "?" not in src:
        return src
    lines = src.split("\n")
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("%", "!")) or ("?" in stripped and HELP.match(stripped)):
            lines[i] = line[: len(line) - len(line.lstrip())] + "# " + line.lstrip()
    return "\n".join(lines)


def _names_used(text: str) -> set[str]:
    """Global names a top-level statement reads: module-level references, and names that nested scopes
    (function bodies, classes, comprehensions) resolve globally. Parameters and locals are not included."""
    try:
        top = symtable.symtable(text, "<cell>", "exec")
    except (SyntaxError, ValueError, RecursionError):
        return set()
    used: set[str] = set()
    stack = [(top, True)]
    while stack:
        table, is_top = stack.pop()
        for sym in table.get_symbols():
            if not sym.is_referenced():
                continue
            if is_top or sym.is_global():
                used.add(sym.get_name())
        stack.extend((child, False) for child in table.get_children())
    return used


def _target_names(node) -> set[str]:
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, (ast.Tuple, ast.List)):
        return set().union(*(_target_names(e) for e in node.elts)) if node.elts else set()
    if isinstance(node, ast.Starred):
        return _target_names(node.value)
    return set()


def _base_name(node) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _defines(node) -> tuple[str, set[str]] | None:
    """(kind, names) for a top-level statement worth keeping; None for demo code."""
    if isinstance(node, ast.Import):
        return "import", {(a.asname or a.name.split(".")[0]) for a in node.names}
    if isinstance(node, ast.ImportFrom):
        if any(a.name == "*" for a in node.names):
            return "import", {"*"}
        return "import", {(a.asname or a.name) for a in node.names}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return "def", {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if isinstance(node, ast.AnnAssign) and node.value is None:
            return None
        names: set[str] = set().union(*(_target_names(t) for t in targets))
        if names:
            return "def", names
        bases = {b for t in targets if (b := _base_name(t)) is not None}
        if bases:  # Cls.forward = fn, CONFIG["x"] = 1: changes a name defined earlier
            return "modify", bases
        return None
    if isinstance(node, (ast.If, ast.Try)) or type(node).__name__ == "TryStar":
        names = set()
        kinds = set()
        for child in ast.walk(node):
            if child is node:
                continue
            got = _defines(child) if isinstance(child, ast.stmt) else None
            if got:
                kinds.add(got[0])
                names |= got[1]
        if names and kinds <= {"import", "def"}:
            return ("import" if kinds == {"import"} else "def"), names
    return None


def _statements(cells: list[str], name: str) -> tuple[list[_Stmt], dict[int, str], dict[int, str]]:
    """Top-level statements worth keeping, the cells that do not parse (cell → error) and stage markers."""
    stmts: list[_Stmt] = []
    broken: dict[int, str] = {}
    markers: dict[int, str] = {}
    for number, raw in enumerate(cells, 1):
        src = _strip_magics(raw)
        marker = MARKER.search(src)
        if marker:
            markers[number] = marker.group(1)
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            broken[number] = f"{getattr(exc, 'msg', None) or exc}" + (f" (line {line} of the cell)" if line else "")
            continue
        except RecursionError:
            broken[number] = "too deeply nested to read"
            continue
        lines = src.split("\n")
        taken_upto = 0
        for node in tree.body:
            got = _defines(node)
            if got is None:
                continue
            kind, names = got
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            end = node.end_lineno or node.lineno
            if start <= taken_upto:  # two statements on one line (a; b): already kept with the first
                continue
            text = "\n".join(lines[start - 1 : end])
            if ";" in lines[start - 1] or (end <= len(lines) and ";" in lines[end - 1]):
                text = ast.get_source_segment(src, node, padded=False) or text
                decorators = getattr(node, "decorator_list", None)
                if decorators:
                    text = "\n".join("@" + (ast.get_source_segment(src, d) or "") for d in decorators) + "\n" + text
            else:
                taken_upto = end
            stmts.append(_Stmt(cell=number, text=text, defines=names, uses=_names_used(text), kind=kind))
    return stmts, broken, markers


def _broken_defining(cells: list[str], broken: dict[int, str], names: tuple[str, ...]) -> list[int]:
    """Broken cells that (by their text) define one of ``names``."""
    out = []
    for number in broken:
        text = cells[number - 1]
        if any(re.search(rf"^\s*(def|class)\s+{re.escape(n)}\b|^\s*{re.escape(n)}\s*=", text, re.M) for n in names):
            out.append(number)
    return out


def slice_notebook(cells: list[str], stages: list[Stage], nb_name: str) -> dict[str, tuple[str | None, str]]:
    """stage key → (source, note) for each of ``stages``; source None means the stage is not there and the note
    says why (for the learner). The source keeps the notebook's order, with a ``# cell N`` line per cell."""
    stmts, broken, markers = _statements(cells, nb_name)
    last_def: dict[str, int] = {}
    for i, s in enumerate(stmts):
        if s.kind != "modify":
            for n in s.defines:
                last_def[n] = i
    star_imports = [i for i, s in enumerate(stmts) if "*" in s.defines]
    modifying: dict[str, list[int]] = {}  # name -> the statements that patch it (Cls.forward = f), found once
    for i, s in enumerate(stmts):
        if s.kind == "modify":
            for n in s.defines:
                modifying.setdefault(n, []).append(i)
    result: dict[str, tuple[str | None, str]] = {}
    for stage in stages:
        roots = {last_def[n] for n in stage.functions if n in last_def}
        roots |= {i for i, s in enumerate(stmts) if markers.get(s.cell) == stage.key}
        bad = _broken_defining(cells, broken, stage.functions)
        bad += [c for c, k in markers.items() if k == stage.key and c in broken and c not in bad]
        if bad:
            first = sorted(bad)[0]
            result[stage.key] = (
                None,
                f"{nb_name}: code cell {first} does not parse ({broken[first]}), so "
                f"{stage.key} could not be taken from it",
            )
            continue
        if not roots:
            result[stage.key] = (
                None,
                f"{nb_name} defines none of {', '.join(stage.functions)} "
                f"(and no cell is marked '# stage: {stage.key}')",
            )
            continue
        keep = set(roots) | set(star_imports)
        todo = list(keep)
        while todo:
            s = stmts[todo.pop()]
            wanted = set(s.uses)
            if s.kind == "def":
                # later statements that patch what this one defines (Cls.forward = f): an index, not a scan of every
                # statement per kept one (a notebook of chained assignments made that quadratic: minutes per class)
                for j in sorted({j for n in s.defines for j in modifying.get(n, ())}):
                    if j not in keep:
                        keep.add(j)
                        todo.append(j)
            for n in wanted - s.defines:
                d = last_def.get(n)
                if d is not None and d not in keep:
                    keep.add(d)
                    todo.append(d)
        parts, cell = [], None
        for i in sorted(keep):
            if stmts[i].cell != cell:
                cell = stmts[i].cell
                parts.append(f"# cell {cell}")
            parts.append(stmts[i].text)
        result[stage.key] = ("\n".join(parts) + "\n", "")
    return result


# ───────────────────────────── one student ─────────────────────────────


def collect_student(
    course: Course, folders: list[Path] | Path, student: str | None = None, layout: str | None = None
) -> Collected:
    """Read one student's stages from ``folders`` (one folder, or nbgrader's assignment folders in order)."""
    if isinstance(folders, (str, Path)):
        folders = [Path(folders)]
    folders = [Path(f) for f in folders]
    sub = Collected(student=student or folders[0].name)
    files: dict[str, Path] = {}  # name → path (first folder wins)
    kinds: dict[str, str] = {}
    dupes: list[str] = []
    for folder in folders:
        for name, kind in sorted(_listing(folder).items()):
            if name in files:
                dupes.append(name)
                continue
            files[name] = folder / name
            kinds[name] = kind
    stage_names = {s.file for s in course.stages} | {Path(s.file).stem + ".ipynb" for s in course.stages}
    notebooks = sorted(
        n
        for n, k in kinds.items()
        if n.endswith(".ipynb") and n not in stage_names and k == "file" and not n.startswith(".")
    )
    single = notebooks[0] if len(notebooks) == 1 else None
    single_cells: list[str] | None = None
    single_error: str | None = None
    single_wanted: list[Stage] = []
    used: set[str] = set()
    sources_from = {"py": 0, "stage-nb": 0, "nb": 0}
    for stage in course.stages:
        nb_name = Path(stage.file).stem + ".ipynb"
        if stage.file in kinds:
            used.add(stage.file)
            try:
                raw = read_capped(files[stage.file], MAX_SOURCE_BYTES)
            except ReadError as exc:
                sub.problems[stage.key] = str(exc)
                continue
            sub.sources[stage.key] = (stage.file, decode_source(raw))
            sources_from["py"] += 1
        elif nb_name in kinds:
            used.add(nb_name)
            try:
                cells = notebook_cells(read_capped(files[nb_name], MAX_NOTEBOOK_BYTES), nb_name)
                source, why = slice_notebook(cells, [stage], nb_name)[stage.key]
            except ReadError as exc:
                source, why = None, str(exc)
            except RecursionError:
                source, why = None, f"{nb_name} is too deeply nested to read"
            if source is None:
                sub.problems[stage.key] = why
            else:
                sub.sources[stage.key] = (nb_name, source)
                sources_from["stage-nb"] += 1
        elif single is not None:
            single_wanted.append(stage)
        else:
            sub.problems[stage.key] = f"file missing: {stage.file}"
    if single_wanted and single is not None:
        used.add(single)
        try:
            single_cells = notebook_cells(read_capped(files[single], MAX_NOTEBOOK_BYTES), single)
            sliced = slice_notebook(single_cells, single_wanted, single)
        except ReadError as exc:
            single_error = str(exc)
            sliced = {}
        except RecursionError:
            single_error = f"{single} is too deeply nested to read"
            sliced = {}
        for stage in single_wanted:
            if single_error:
                sub.problems[stage.key] = single_error
                continue
            source, why = sliced[stage.key]
            if source is None:
                # a stage simply absent from the notebook is "missing", as a missing file would be
                sub.problems[stage.key] = why
            else:
                sub.sources[stage.key] = (f"{single}#{stage.key}", source)
                sources_from["nb"] += 1
        if single_error:
            sub.notes.append(single_error)
    if sources_from["nb"] and not sources_from["py"] and not sources_from["stage-nb"]:
        sub.layout = "notebook"
    elif sources_from["stage-nb"] and not sources_from["py"]:
        sub.layout = "stage notebooks"
    elif not sub.sources:
        sub.layout = "empty"
    if sources_from["nb"] and (sources_from["py"] or sources_from["stage-nb"]):
        sub.notes.append(f"{sources_from['nb']} stage(s) taken from {single}, the others from their own files")
    if len(notebooks) > 1:
        missing = [s for s in course.stages if s.key not in sub.sources]
        if missing:
            why = (
                f"found {len(notebooks)} notebooks ({', '.join(notebooks[:4])}{', ...' if len(notebooks) > 4 else ''}):"
                " submit one notebook, or one file per stage"
            )
            for s in missing:
                if sub.problems.get(s.key, "").startswith("file missing"):
                    sub.problems[s.key] = f"file missing: {s.file} ({why})"
            sub.notes.append(why)
    ignored = sorted(
        n for n in kinds if n not in used and n not in QUIET_NAMES and not n.startswith(".") and n not in notebooks
    )
    if ignored:
        shown = ", ".join(_printable(n) for n in ignored[:6]) + (
            f" and {len(ignored) - 6} more" if len(ignored) > 6 else ""
        )
        sub.notes.append(f"ignored (only the stage files are read): {shown}")
    if dupes:
        sub.notes.append(
            "the same file is in several assignment folders; the first was used: "
            + ", ".join(_printable(n) for n in sorted(set(dupes))[:6])
        )
    if layout:
        sub.layout = layout
    if not sub.sources and not any(kinds.get(s.file) for s in course.stages) and not notebooks:
        inside = sorted(
            _printable(n) + "/"
            for n, k in kinds.items()
            if k == "dir" and not n.startswith(".") and n not in QUIET_NAMES
        )
        sub.notes.append(
            "no stage file or notebook found"
            + (
                f" (it holds the folders {', '.join(inside[:6])}: one of them, moved up, would be read)"
                if inside
                else ""
            )
        )
    return sub


OUTPUT_MARKER = "run.json"  # every output folder of `grade` holds one (see store.RUN_FILE)
WRAPPER_DEPTH = 3


def _is_output_folder(path: Path) -> bool:
    """A folder a run of ``grade`` wrote (its ``run.json`` names a course and a seed), e.g. an earlier run's
    ``--out`` inside the class folder: never a student."""
    marker = path / OUTPUT_MARKER
    if not os.path.isfile(marker) or os.path.islink(marker):
        return False
    try:
        data = json.loads(read_capped(marker, 100_000))
    except (ReadError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and "seed" in data and "course" in data


def _has_stage_files(course: Course, folder: Path) -> bool:
    names = {n for n, k in _listing(folder).items() if k == "file"}
    wanted = {s.file for s in course.stages} | {Path(s.file).stem + ".ipynb" for s in course.stages}
    return bool(names & wanted) or any(n.endswith(".ipynb") for n in names) or _is_real_dir(folder / "exercises")


def unwrap(course: Course, folder: Path) -> tuple[Path, list[str]]:
    """Where a student's files are: ``folder`` itself, or, when it holds no stage file, notebook or exercises/
    but exactly one sub-folder (what unpacking a downloaded zip gives: ``alice/attention-main/``), that
    sub-folder, looked into the same way (up to WRAPPER_DEPTH levels). Returns the folder and the wrapper
    names walked through. Links are never followed."""
    walked: list[str] = []
    while len(walked) < WRAPPER_DEPTH and not _has_stage_files(course, folder):
        subs = [
            n
            for n, k in _listing(folder).items()
            if k == "dir" and not n.startswith(".") and n not in QUIET_NAMES and n != "__MACOSX"
        ]
        if len(subs) != 1:
            break
        folder = folder / subs[0]
        walked.append(subs[0])
    return folder, walked


def _printable(name: str) -> str:
    """A file name as a repr when it holds control characters (names are learner-controlled)."""
    return name if name.isprintable() and len(name) <= 80 else repr(name[:80])


# ───────────────────────────── a whole class ─────────────────────────────


@dataclass
class ClassListing:
    submissions: list[Collected]
    layout: str  # folders | nbgrader
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (entry name, why it is not a student)


def collect_class(
    course: Course, class_dir: Path, *, exclude: list[Path] | None = None, assignment: str | None = None
) -> ClassListing:
    """Every student in ``class_dir``, sorted by id. ``exclude``: folders that are not students (the output
    folder when it lies inside the class folder). ``assignment``: nbgrader assignment to take (default: all)."""
    class_dir = Path(class_dir)
    if not _is_real_dir(class_dir) and not class_dir.is_dir():
        raise FileNotFoundError(f"{class_dir} is not a folder")
    excluded = set()
    for e in exclude or []:
        try:
            excluded.add(Path(e).resolve())
        except OSError:
            pass
    root, layout = class_dir, "folders"
    if _is_real_dir(class_dir / "submitted"):
        root, layout = class_dir / "submitted", "nbgrader"
    listing = ClassListing(submissions=[], layout=layout)
    for name, kind in sorted(_listing(root).items()):
        if name.startswith(".") or name in QUIET_NAMES:
            continue
        path = root / name
        if kind != "dir":
            if kind == "link":
                listing.skipped.append((name, "a symbolic link, not a folder: skipped"))
            elif not (layout == "folders" and kind == "file"):
                listing.skipped.append((name, "not a folder: skipped"))
            continue
        if path.resolve() in excluded:
            continue
        if name in RESERVED or not name.isprintable() or name.strip() != name or not name:
            listing.skipped.append(
                (
                    name,
                    "this folder name cannot be a student id (it clashes with an output "
                    "file or holds control characters): rename it",
                )
            )
            continue
        if len(listing.submissions) >= MAX_STUDENTS:
            listing.skipped.append((name, f"more than {MAX_STUDENTS} students: skipped"))
            continue
        if layout == "nbgrader":
            folders = [
                path / a
                for a, k in sorted(_listing(path).items())
                if k == "dir" and not a.startswith(".") and (assignment is None or a == assignment)
            ]
            if not folders:
                sub = Collected(
                    student=name,
                    layout="empty",
                    problems={s.key: f"file missing: {s.file}" for s in course.stages},
                    notes=["no assignment folder" + (f" named {assignment}" if assignment else "")],
                )
            else:
                sub = collect_student(course, folders, student=name)
                if sub.layout == "files":
                    sub.layout = "nbgrader"
        else:
            if _is_output_folder(path):
                listing.skipped.append(
                    (name, f"an output folder of `grade` (it holds {OUTPUT_MARKER}), not a student: skipped")
                )
                continue
            # a downloaded zip unpacks into a wrapper folder (alice/attention-main/...): the files are read there
            inner, wrappers = unwrap(course, path)
            # a clone of the student release keeps its stage files in exercises/: look there too (the top wins)
            folders = [inner] + ([inner / "exercises"] if _is_real_dir(inner / "exercises") else [])
            sub = collect_student(course, folders, student=name)
            if wrappers:
                sub.notes.insert(0, f"stage files read from the folder {'/'.join(_printable(w) for w in wrappers)}/")
        listing.submissions.append(sub)
    return listing
