"""``python -m autograder release OUT_DIR``: a starter repository for students, with public checks only.

What a release holds, and nothing else:

- ``exercises/``: the stubs, rendered from ``solutions/`` (the code between the solution markers removed);
- ``course.yml``: stages, points and hints;
- the ``autograder`` package as far as ``check``, ``hint``, ``watch`` and the visible test cells of an nbgrader
  class (:func:`autograder.inprocess.nbgrader_public`) need it: an explicit list of modules
  (:data:`SHIPPED`), the public graders and the grader helpers they import;
- ``autograder/data/snapshot``: the values the oracle gave the public checks when they ran at release time
  against the solutions (and against the mistake catalogue in ``tests/mistakes/``, so that failure paths find
  their known-mistake outputs too): plain arrays in an ``.npz`` plus a JSON index, loaded without pickle;
- a README for students, a Makefile with the same two-command set-up, a ``pyproject.toml`` and a GitHub
  Classroom workflow (one autograding step per stage).

Left out: ``solutions/``, ``autograder/oracles/`` (reference code), ``autograder/graders/hidden/`` and every
instructor tool. In the release, :mod:`autograder.oracle` finds no ``oracles`` package and answers from the
snapshot, so the same public check code gives the same verdicts; ``check`` runs the public checks only because the
hidden graders are not there. After writing the release, the build scans it for leaks (:func:`scan_for_leaks`)
and runs the release's own ``check`` on the solutions (in a temporary folder outside it) to prove it works.
"""

from __future__ import annotations

import ast
import builtins
import json
import keyword
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
ROOT = PACKAGE.parent
TEMPLATES = PACKAGE / "templates" / "release"
SNAPSHOT_DIR = Path("autograder") / "data" / "snapshot"
MANIFEST = Path("autograder") / "data" / "release.json"
MISTAKE_CATALOGUE = Path("tests") / "mistakes"

# The modules of the package a student's check, hint and watch need (paths inside autograder/). An allowlist:
# a new module ships only once it is named here.
SHIPPED = (
    "__init__.py",
    "__main__.py",
    "cli.py",
    "course.py",
    "display.py",
    "progress.py",
    "inprocess.py",
    "results.py",
    "runner.py",
    "fixtures.py",
    "checks/__init__.py",
    "oracle.py",
    "sandbox/__init__.py",
    "sandbox/host.py",
    "sandbox/proxy.py",
    "sandbox/values.py",
    "sandbox/errors.py",
    "sandbox/evidence.py",
    "runtime/__init__.py",
    "runtime/wire.py",
    "runtime/torchrefs.py",
    "runtime/recorder.py",
    "runtime/executor.py",
    "runtime/fused.py",
    "runtime/seccomp.py",
    "runtime/zygote.py",
    "runtime/worker.py",
    "graders/__init__.py",
    "graders/inputs.py",
)
# Modules (dotted, under autograder.) a student never gets: reference code, hidden checks, instructor tools, the
# notebook generator. A shipped module may mention them (cli.py names the instructor commands, oracle.py imports
# oracles when it exists): they are optional there and nowhere else.
NOT_SHIPPED = ("oracles", "graders.hidden", "instructor", "reports")


class ReleaseError(RuntimeError):
    """The release could not be built; the message says why and what to do."""


@dataclass
class Release:
    out: Path
    stages: list[str]  # stages with public checks
    without_public_checks: list[str]
    files: list[str] = field(default_factory=list)
    snapshot_entries: int = 0
    # the instructor's public verdicts at release time: "solutions", "stubs", "mistake-<stem>" -> check_json
    instructor: dict[str, dict] = field(default_factory=dict)


# ───────────────────────────── which modules ship ─────────────────────────────


def _module_name(rel: str) -> str:
    """'graders/inputs.py' -> 'graders.inputs'; 'graders/__init__.py' -> 'graders'."""
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _module_file(name: str, package: Path) -> str | None:
    """'graders.inputs' -> 'graders/inputs.py' when it exists in ``package``."""
    base = name.replace(".", "/")
    for rel in (f"{base}.py", f"{base}/__init__.py"):
        if (package / rel).is_file():
            return rel
    if (package / base).is_dir():  # a namespace directory, e.g. oracles/ without __init__
        return f"{base}/"
    return None


def _referenced_modules(rel: str, source: str) -> set[str]:
    """Modules of the package that ``rel`` imports (absolute or relative) or names in a string literal."""
    here = _module_name(rel).split(".") if rel != "__init__.py" else []
    package_parts = here if rel.endswith("__init__.py") else here[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, filename=rel)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("autograder."):
                    found.add(alias.name[len("autograder.") :])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            elif node.module and (node.module == "autograder" or node.module.startswith("autograder.")):
                mod = node.module[len("autograder.") :] if node.module != "autograder" else ""
            else:
                continue
            for alias in node.names:  # `from . import oracles` imports a module; `from .x import y` a name
                found.add(f"{mod}.{alias.name}".strip("."))
            if mod:
                found.add(mod)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = re.fullmatch(r"autograder\.([A-Za-z_][\w.]*)", node.value)
            if m:
                found.add(m.group(1))
    return found


def _not_shipped(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in NOT_SHIPPED)


def select_modules(package: Path = PACKAGE, stages: set[str] | None = None) -> list[str]:
    """The files of the package a release ships (relative paths), after checking every import they make.

    Ships :data:`SHIPPED`, ``graders/public/test_*.py`` (of ``stages`` only, when given: the class's selection)
    and any ``graders/`` helper they import. Fails when a
    shipped module needs a module that is neither shipped nor instructor-only (decide where it belongs), or when
    a shipped module needs an instructor-only module that is not optional."""
    missing = [rel for rel in SHIPPED if not (package / rel).is_file()]
    if missing:
        raise ReleaseError(f"release.SHIPPED names modules that do not exist: {', '.join(missing)}")
    chosen = list(SHIPPED) + sorted(
        str(p.relative_to(package))
        for p in (package / "graders" / "public").glob("test_*.py")
        if stages is None or p.stem.removeprefix("test_") in stages
    )
    if (package / "graders" / "public" / "__init__.py").is_file():
        chosen.append("graders/public/__init__.py")
    queue = list(chosen)
    while queue:
        rel = queue.pop()
        for name in sorted(_referenced_modules(rel, (package / rel).read_text(encoding="utf-8"))):
            target = _module_file(name, package)
            if target is None:  # a name imported from a module (`from .sandbox.values import Out`), or nothing
                continue
            if target in chosen:
                continue
            if _not_shipped(name):
                optional = (rel == "cli.py") or (rel == "oracle.py" and name == "oracles")
                if not optional:
                    raise ReleaseError(f"autograder/{rel} needs autograder.{name}, which never ships to students")
                continue
            if name.startswith("graders.") and not target.endswith("/"):
                chosen.append(target)  # a helper of the public graders
                queue.append(target)
                continue
            raise ReleaseError(
                f"autograder/{rel} needs autograder.{name}, which release.py does not know: add "
                f"{target!r} to SHIPPED if students need it, or {name!r} to NOT_SHIPPED if they must not get it"
            )
    return chosen


# ───────────────────────────── the expected values ─────────────────────────────


def _catalogue(course, root: Path, paths: list[Path] | None) -> list:
    """The mistake catalogue (or ``paths`` from it) as one-stage submissions (file ``<stage key>__<what>.py``)."""
    from .catalogue import mistake_files, mistake_source
    from ..runner import Submission

    subs = []
    for path in mistake_files(root) if paths is None else paths:
        key = path.name.split("__")[0]
        if key in course.keys:
            subs.append(Submission(f"mistake-{path.stem}", {key: (course.stage(key).file, mistake_source(path, root))}))
    return subs


def record_snapshot(
    course, root: Path, stages: list[str], stubs: dict[str, str], *, catalogue: list[Path] | None = None
):
    """Run the public checks with the oracle recording: on the solutions, the stubs and the mistake catalogue
    (every file of ``tests/mistakes/`` when ``catalogue`` is None, else those files).

    Returns (snapshot, {submission name: result}); the names are "solutions", "stubs" and "mistake-<file stem>".
    These are the instructor's verdicts a release must reproduce. The solutions must get full marks."""
    from .. import oracle
    from ..runner import Submission, grade

    if oracle._SNAPSHOT is not None:
        raise ReleaseError(
            "this autograder answers from a snapshot (it is a release itself): build releases from "
            "the instructor's repository"
        )
    solutions = Submission(
        "solutions",
        {
            s.key: (s.file, (root / "solutions" / s.file).read_text(encoding="utf-8"))
            for s in course.stages
            if (root / "solutions" / s.file).is_file()
        },
    )
    blanks = Submission(
        "stubs", {s.key: (s.file, student_stub(stubs[s.file], s)) for s in course.stages if s.file in stubs}
    )
    subs = [solutions, blanks] + _catalogue(course, root, catalogue)
    snapshot = oracle.Snapshot()
    oracle.record_into(snapshot)
    try:
        results = grade(course, subs, stages=stages, include_hidden=False, seed=0)
    finally:
        oracle.record_into(None)
    reference = results[0]
    wrong = [
        f"{s.key}: {c.name}: {c.message.splitlines()[0] if c.message else 'failed'}"
        for s in reference.stages
        for c in s.checks
        if not c.passed
    ]
    if wrong:
        raise ReleaseError(
            "the solutions fail public checks, so the expected values cannot be trusted:\n  " + "\n  ".join(wrong)
        )
    return snapshot, {r.student: r for r in results}


# ───────────────────────────── writing the release ─────────────────────────────


def _check_target(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"{out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise ReleaseError(f"{out} is not empty and is not a previous release: choose an empty folder")


def _prepare(out: Path) -> None:
    """An empty folder, or a previous release (replaced, but its .git is kept)."""
    _check_target(out)
    if out.is_dir():
        for item in out.iterdir():
            if item.name == ".git":
                continue
            shutil.rmtree(item) if item.is_dir() and not item.is_symlink() else item.unlink()
    out.mkdir(parents=True, exist_ok=True)


def _render(name: str, values: dict[str, str]) -> str:
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("@@" + key + "@@", value)
    left = re.findall(r"@@[A-Z_]+@@", text)
    if left:
        raise ReleaseError(f"template {name}: no value for {', '.join(sorted(set(left)))}")
    return text


def _yaml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid YAML double-quoted scalar


def stage_command(key: str) -> str:
    """The command GitHub Classroom runs for one stage: exit 0 only when its public checks all pass."""
    return f".venv/bin/python -m autograder check --stage {key} --public-only"


def _workflow_steps(course, stages: list[str]) -> tuple[str, str, str]:
    steps, env, runners = [], [], []
    for stage in course.stages:
        if stage.key not in stages:
            continue
        steps.append(
            f"      - name: {_yaml_str(f'{stage.number}. {stage.key}')}\n"
            f"        id: {stage.key}\n"
            f"        uses: classroom-resources/autograding-command-grader@v1\n"
            f"        continue-on-error: true\n"
            f"        with:\n"
            f"          test-name: {_yaml_str(f'{stage.number}. {stage.key}: {stage.title}')}\n"
            f"          command: {_yaml_str(stage_command(stage.key))}\n"
            f"          timeout: 10\n"
            f"          max-score: {stage.points}\n"
        )
        env.append(f'          {stage.key.upper()}_RESULTS: "${{{{ steps.{stage.key}.outputs.result }}}}"\n')
        runners.append(stage.key)
    return "".join(steps).rstrip("\n"), "".join(env).rstrip("\n"), ",".join(runners)


def _stage_table(course, stages: list[str]) -> str:
    rows = ["| # | stage | your file | you write | points |", "|---|---|---|---|---|"]
    for s in course.stages:
        funcs = ", ".join(f"`{f}`" for f in s.functions) or "see the file"
        note = "" if s.key in stages else " (no public checks yet)"
        rows.append(f"| {s.number} | **{s.title}** (`{s.key}`){note} | `exercises/{s.file}` | {funcs} | {s.points} |")
    return "\n".join(rows)


def student_stub(stub: str, stage) -> str:
    """The stub with a header for students instead of the generator's note to course authors."""
    from .generate import HEADER

    generated = HEADER.format(name=stage.file)
    if stub.startswith(generated):
        stub = stub[len(generated) :]
    return f"# Stage {stage.number}: {stage.title}. Write your code in this file, then run `make check`.\n" + stub


def _write(out: Path, rel: str | Path, text: str | bytes) -> None:
    path = out / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def _write_release(
    out: Path,
    course,
    root: Path,
    modules: list[str],
    sources: dict[str, bytes],
    stubs: dict[str, str],
    stages: list[str],
    snapshot,
    reference,
) -> None:
    from .. import __version__

    for rel in modules:
        _write(out, Path("autograder") / rel, sources[rel])
    for s in course.stages:
        _write(out, Path("exercises") / s.file, student_stub(stubs[s.file], s))
    _write(out, "course.yml", (root / "course.yml").read_bytes())
    snapshot.save(out / SNAPSHOT_DIR)
    steps, env, runners = _workflow_steps(course, stages)
    first = course.stages[0]
    values = {
        "TITLE": course.title,
        "COURSE": course.id,
        "VERSION": __version__,
        "STAGE_TABLE": _stage_table(course, stages),
        "FIRST_KEY": first.key,
        "FIRST_FILE": first.file,
        "MAX_SCORE": str(sum(s.points for s in course.stages if s.key in stages)),
        "STEPS": steps,
        "REPORTER_ENV": env,
        "RUNNERS": runners,
        "EXAMPLE_COMMAND": stage_command(first.key),
    }
    _write(out, "README.md", _render("README.md", values))
    _write(out, "Makefile", _render("Makefile", values))
    _write(out, "pyproject.toml", _render("pyproject.toml", values))
    _write(out, ".gitignore", _render("gitignore", values))
    _write(out, Path(".github") / "workflows" / "classroom.yml", _render("classroom.yml", values))
    _write(
        out,
        MANIFEST,
        json.dumps(
            {
                "course": course.id,
                "version": __version__,
                "stages_with_public_checks": stages,
                "public_checks": {s.key: len(s.checks) for s in reference.stages},
                "snapshot_entries": len(snapshot.index),
            },
            indent=2,
        )
        + "\n",
    )


def build_release(
    out: Path, *, root: Path = ROOT, verify: bool = True, catalogue: list[Path] | None = None, log=print
) -> Release:
    """Write the student repository into ``out`` and return what went into it.

    ``catalogue``: the wrong files whose public-check runs are recorded besides the solutions' (default: all of
    ``tests/mistakes/``; ``[]`` for none). Their failure paths may ask the oracle for values the solutions never
    need, e.g. a known mistake's output on the notebooks' table."""
    from ..course import load_course
    from .generate import render_exercises
    from ..results import check_json

    out = Path(out).resolve()
    root = Path(root).resolve()
    if (
        out == root
        or root in out.parents
        and out.relative_to(root).parts[0] in ("autograder", "solutions", "exercises", "tests")
    ):
        raise ReleaseError(f"{out}: write the release outside the course's sources (e.g. dist/student)")
    _check_target(out)
    course = load_course(root / "course.yml")
    package = root / "autograder"
    modules = select_modules(package, set(course.keys))
    public = {s.key for s in course.stages if (package / "graders" / "public" / f"test_{s.key}.py").is_file()}
    stages = [s.key for s in course.stages if s.key in public]
    without = [s.key for s in course.stages if s.key not in public]
    if not stages:
        raise ReleaseError("no stage has public checks (autograder/graders/public/test_<key>.py): nothing to release")
    for key in without:
        log(f"warning: stage {key} has no public checks; students get its stub but no feedback on it")

    stubs = render_exercises(root)
    absent = [s.file for s in course.stages if s.file not in stubs]
    if absent:
        raise ReleaseError(f"no solution to render a stub from: {', '.join('solutions/' + f for f in absent)}")

    sources = {rel: (package / rel).read_bytes() for rel in modules}
    log(f"recording the public checks' expected values ({len(stages)} stages) ...")
    snapshot, graded = record_snapshot(course, root, stages, stubs, catalogue=catalogue)
    reference = graded["solutions"]
    changed = [rel for rel in modules if (package / rel).read_bytes() != sources[rel]]
    if changed:
        raise ReleaseError(f"{', '.join(changed)} changed while the expected values were recorded: build again")

    # written beside the target first, scanned, and only then moved in: a failed build leaves no half release
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        _write_release(staging, course, root, modules, sources, stubs, stages, snapshot, reference)
        leaks = scan_for_leaks(staging, root)
        if leaks:
            raise ReleaseError(
                "the release would give answers away, so it was not written:\n  " + "\n  ".join(leaks[:20])
            )
        _prepare(out)
        for item in staging.iterdir():
            shutil.move(str(item), str(out / item.name))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    release = Release(
        out=out,
        stages=stages,
        without_public_checks=without,
        files=sorted(
            str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and ".git" not in p.relative_to(out).parts
        ),
        snapshot_entries=len(snapshot.index),
        instructor={name: check_json(r) for name, r in graded.items()},
    )
    if verify:
        log("checking the solutions with the release's own autograder ...")
        verify_release(out, root, course, reference)
    return release


# ───────────────────────────── proofs ─────────────────────────────


def _norm(line: str) -> str:
    return " ".join(line.split())


_OPENER = re.compile(r"^(?:raise |return |yield |assert )?[\w.]*[(\[{]$")
_GENERIC = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"_", "self", "cls"}


def _generic(text: str) -> bool:
    """A line made only of keywords, builtins and literals (``for _ in range(3):``) says nothing about a stage."""
    return all(word in _GENERIC for word in re.findall(r"[A-Za-z_]\w*", re.sub(r"(['\"]).*?\1", "", text)))


def _code_lines(source: str, min_len: int = 16) -> set[str]:
    """Distinctive lines of code: whitespace collapsed; comments, short lines and bare openers left out."""
    lines = set()
    for line in source.splitlines():
        text = _norm(line)
        if len(text) >= min_len and not text.startswith("#") and not _OPENER.match(text) and not _generic(text):
            lines.add(text)
    return lines


def _function_bodies(source: str) -> list[str]:
    """The code of every function and lambda in ``source``: bodies only (no signature, no docstring)."""
    lines = source.splitlines()
    bodies = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Lambda):
            bodies.append(ast.get_source_segment(source, node.body) or "")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            first = body[0] if body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                body = body[1:]
            if body:
                bodies.append("\n".join(lines[body[0].lineno - 1 : body[-1].end_lineno]))
    return bodies


def _release_lines(out: Path) -> dict[str, set[str]]:
    """Every file of the release (but .git and .venv) as its set of whitespace-collapsed lines."""
    texts = {}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out)
        if path.is_file() and rel.parts[0] not in (".git", ".venv"):
            texts[str(rel)] = {_norm(l) for l in path.read_bytes().decode("utf-8", "replace").splitlines()}
    return texts


def scan_for_leaks(out: Path, root: Path = ROOT) -> list[str]:
    """Everything in the release at ``out`` that gives answers away; an empty list means none.

    Looks for: any path of a solution, a hidden grader, an oracle or an instructor tool; and, as whole lines
    anywhere in the release, every distinctive line of every solution region, of the hidden graders (those the
    public graders do not share) and of the oracles' function bodies."""
    from .generate import solution_regions

    out, root = Path(out), Path(root)
    texts = _release_lines(out)
    found = []
    for rel in texts:
        parts = Path(rel).parts
        if parts[0] in ("solutions", "tests") or "oracles" in parts or "hidden" in parts:
            found.append(f"{rel}: this path must not be in a release")
        elif parts[0] == "autograder" and rel.endswith(".py") and _not_shipped(_module_name("/".join(parts[1:]))):
            found.append(f"{rel}: an instructor-only module")

    def search(needles: set[str], what: str) -> None:
        for needle in sorted(needles):
            for rel, lines in texts.items():
                if needle in lines:
                    found.append(f"{rel}: contains {what}: {needle!r}")

    for path in sorted((root / "solutions").glob("*.py")):
        needles = set()
        for region in solution_regions(path.read_text(encoding="utf-8")):
            needles |= _code_lines(region)
        search(needles, f"code from a solution region of solutions/{path.name}")
    graders = root / "autograder" / "graders"
    public_lines = set()
    for path in graders.rglob("*.py"):
        if "hidden" not in path.relative_to(graders).parts:
            public_lines |= _code_lines(path.read_text(encoding="utf-8"))
    for path in sorted((graders / "hidden").glob("*.py")):
        search(_code_lines(path.read_text(encoding="utf-8")) - public_lines, f"code of the hidden grader {path.name}")
    for path in sorted((root / "autograder" / "oracles").glob("*.py")):
        needles = set()
        for body in _function_bodies(path.read_text(encoding="utf-8")):
            needles |= _code_lines(body)
        search(needles, f"reference code from oracles/{path.name}")
    return found


_RUN_IN_RELEASE = """
import json, sys
from pathlib import Path
import autograder
release = Path(sys.argv[1]).resolve()
assert Path(autograder.__file__).resolve().parent == release / "autograder", autograder.__file__
from autograder.cli import main
sys.exit(main(sys.argv[2:]))
"""


def release_python_env(out: Path) -> dict[str, str]:
    """Environment that makes ``python -m autograder`` (or -c) import the release's package, not this one."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(out) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def verify_release(out: Path, root: Path, course, reference) -> None:
    """The release's own check, on a copy of the solutions outside it, must give every public check full marks
    and the same verdicts and messages as this repository's grading."""
    from ..results import check_json

    with tempfile.TemporaryDirectory(prefix="release-verify-") as tmp:
        folder = Path(tmp) / "solutions"
        folder.mkdir()
        for s in course.stages:
            if (root / "solutions" / s.file).is_file():
                shutil.copy(root / "solutions" / s.file, folder / s.file)
        proc = subprocess.run(
            [sys.executable, "-c", _RUN_IN_RELEASE, str(out), "check", str(folder), "--json"],
            cwd=out,
            env=release_python_env(out),
            capture_output=True,
            text=True,
            timeout=900,
        )
    try:
        got = json.loads(proc.stdout)
    except ValueError:
        raise ReleaseError(
            f"the release's check did not run (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
        ) from None
    if proc.returncode != 0 or got["score"] != got["max_score"]:
        bad = [
            f"{s['key']}: {c['name']}: {c['message']}" for s in got["stages"] for c in s["checks"] if not c["passed"]
        ]
        raise ReleaseError("the release's check does not give the solutions full marks:\n  " + "\n  ".join(bad))
    want = check_json(reference)
    if comparable(got) != comparable(want):
        raise ReleaseError("the release's check disagrees with this repository's public checks on the solutions")


def comparable(data: dict) -> list:
    """A ``check --json`` document reduced to what must agree between a release and the instructor's grading."""
    return [
        (
            s["key"],
            s["status"],
            [(c["name"], c["passed"], c["points"], c["max_points"], c["message"], c["mistake"]) for c in s["checks"]],
        )
        for s in data["stages"]
    ]


# ───────────────────────────── command line ─────────────────────────────


def cmd_release(args) -> int:
    try:
        release = build_release(
            Path(args.out_dir), verify=not args.no_verify, catalogue=[] if args.no_catalogue else None
        )
    except ReleaseError as exc:
        print(f"autograder release: {exc}", file=sys.stderr)
        return 1
    print(
        f"wrote {release.out}: {len(release.files)} files, public checks for {len(release.stages)} stages "
        f"({', '.join(release.stages)}), {release.snapshot_entries} stored expected values"
    )
    if release.without_public_checks:
        print(f"no public checks (stubs only): {', '.join(release.without_public_checks)}")
    print("no solution code, hidden checks or reference code found in it")
    return 0


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "release",
        help="write a student starter repository: stubs, public checks, no solutions",
        description="Write a self-contained student repository into OUT_DIR: exercises/ (stubs), the public "
        "checks with their expected values stored as data, a README, a Makefile and a GitHub "
        "Classroom workflow. No solutions, hidden checks or reference code.",
    )
    p.add_argument("out_dir", help="an empty folder, or a previous release to replace (its .git is kept)")
    p.add_argument(
        "--no-verify",
        action="store_true",
        help="skip running the release's own check on the solutions after writing it",
    )
    p.add_argument(
        "--no-catalogue",
        action="store_true",
        help="record expected values from the solutions only, not from tests/mistakes/ too",
    )
    p.set_defaults(func=cmd_release)
