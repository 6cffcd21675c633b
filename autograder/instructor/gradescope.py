"""``python -m autograder gradescope build OUT.zip``: the course as a Gradescope autograder.

Gradescope unpacks the zip into ``/autograder/source``, runs ``setup.sh`` once (as root) to build the image, then
``run_autograder`` for every submission, which must leave ``/autograder/results/results.json``. The zip holds::

    setup.sh          apt: python3, venv, bubblewrap; a venv in /autograder/venv with the Python packages;
                      the pinned CPU build of torch only when the interpreter has no torch
    run_autograder    python -m autograder gradescope run: grade /autograder/submission, write results.json
    requirements.txt  the Python packages (torch apart), every one pinned (``==``), dependencies included
    requirements-torch.txt  torch's own dependencies, pinned (installed only with torch)
    course.yml
    autograder/       the package: runner, sandbox, worker, graders, oracles. Never the solutions.

``gradescope run`` grades the submission exactly as ``python -m autograder grade`` grades one student: the
stage files (or one notebook, or per-stage notebooks; a single sub-folder is looked into), read by
:mod:`autograder.instructor.collect`, each stage in a fresh sandboxed child (bubblewrap when the image allows it; otherwise
the reduced fallback, which still grades: learner code runs under a uid of its own, never root, and the
autograder's own source, submission and results folders are closed to that uid before any learner code runs).
``results.json`` follows Gradescope's documented format: ``score``, ``output``, ``tests[]`` (``name``,
``score``, ``max_score``, ``status``, ``output``, ``visibility``), ``extra_data`` (the seed of the hidden
inputs, ``isolation`` in words and ``sandbox`` field by field: ``level`` is ``bubblewrap`` or ``reduced``);
what the sandbox lacks is also said in ``output``, which the learner sees.

Every path derives from ``$AUTOGRADER_ROOT`` (default ``/autograder``), so a test can run ``run_autograder``
against a simulated tree; ``$AUTOGRADER_PYTHON`` overrides the interpreter.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import stat
import sys
import time
import zipfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parent
DEFAULT_ROOT = "/autograder"
TORCH_PIN = "torch==2.13.0"  # kept equal to the Makefile's TORCH_PIN (read from it when building)
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
PIP_PIN = "pip==26.3"
# Every package setup.sh installs, pinned to the versions the course's tests ran with, installed with --no-deps
# (nothing unpinned slips in as a dependency; ``pip check`` then proves the set complete): the autograder's own
# dependencies and theirs, torch's (installed only when the image has no torch, also with --no-deps), and the
# two back-ports pytest needs on Python < 3.11. tests/test_gradescope.py fails when a pin leaves the set or
# differs from the test environment's version.
REQUIREMENTS = [
    "numpy==2.4.6",
    "PyYAML==6.0.3",
    "rich==15.0.0",
    "filelock==4.2.12",
    "markdown-it-py==4.3.0",
    "mdurl==0.1.2",
    "Pygments==2.21.0",
    "pytest==9.2.0",
    "iniconfig==2.3.1",
    "packaging==26.3",
    "pluggy==1.7.0",
    'tomli==2.2.1; python_version < "3.11"',
    'exceptiongroup==1.2.2; python_version < "3.11"',
    'typing_extensions==4.16.0; python_version < "3.11"',
]
TORCH_REQUIREMENTS = [
    "fsspec==2026.9.0",
    "Jinja2==3.1.6",
    "MarkupSafe==3.0.4",
    "networkx==3.6.1",
    "sympy==1.14.0",
    "mpmath==1.3.0",
    "setuptools==84.2.1",
    "typing_extensions==4.16.0",
]


def constraints() -> str:
    """The text of ``constraints.txt`` (the repository's root): the Makefile's set-up installs with these pins, so
    the tests run with the versions the Gradescope image installs, whatever the package index has released since."""
    return (
        "# written from autograder/instructor/gradescope.py (REQUIREMENTS, TORCH_REQUIREMENTS): the Makefile's set-up\n"
        "# installs these versions, the ones the Gradescope image pins (tests/test_gradescope.py checks both)\n"
        + "\n".join(REQUIREMENTS + TORCH_REQUIREMENTS)
        + "\n"
    )


SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image.
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q python3 python3-venv python3-pip
# bubblewrap is the sandbox; without it (or where the image forbids namespaces) learner code runs in the reduced
# fallback, under a uid of its own, and results.json says so (output, extra_data.isolation, extra_data.sandbox)
apt-get install -y -q bubblewrap || echo "WARNING: bubblewrap could not be installed"
python3 -m venv --system-site-packages "$ROOT/venv"  # keeps a torch the image may already have
PY="$ROOT/venv/bin/python"
"$PY" -m pip install -q "{pip_pin}"
# every version pinned, nothing installed that is not listed (--no-deps): the image is the one the tests ran with
"$PY" -m pip install -q --no-deps -r "$ROOT/source/requirements.txt"
# torch: only when there is none (then the pinned CPU build and its pinned dependencies, never an unpinned one
# that pulls in CUDA)
if ! "$PY" -c "import torch" 2>/dev/null; then
  "$PY" -m pip install -q --no-deps -r "$ROOT/source/requirements-torch.txt"
  "$PY" -m pip install -q --no-deps "{torch_pin}" --index-url {torch_index}
fi
"$PY" -m pip check
"$PY" -c "import numpy, pytest, torch, yaml; print('autograder ready: torch', torch.__version__)"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission: grade $ROOT/submission, write $ROOT/results/results.json.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PY="${AUTOGRADER_PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x "$ROOT/venv/bin/python" ]; then PY="$ROOT/venv/bin/python"; else PY="python3"; fi
fi
cd "$ROOT/source"
exec "$PY" -m autograder gradescope run --root "$ROOT"
"""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "gradescope",
        help="build a Gradescope autograder zip, or run it on a submission",
        description="Gradescope autograder: 'build OUT.zip' makes the zip to upload; "
        "'run' is what the zip's run_autograder calls.",
    )
    sub = p.add_subparsers(dest="gradescope_command", required=True)
    b = sub.add_parser("build", help="write the autograder zip (setup.sh, run_autograder, the package, course.yml)")
    b.add_argument("out", metavar="OUT.zip")
    b.set_defaults(func=cmd_build)
    r = sub.add_parser("run", help="grade ROOT/submission and write ROOT/results/results.json")
    r.add_argument("--root", default=None, help="the autograder tree (default $AUTOGRADER_ROOT or /autograder)")
    r.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="wall-clock seconds per call (default 10; a stage's calls together: three times that)",
    )
    r.set_defaults(func=cmd_run)


# ───────────────────────────── building the zip ─────────────────────────────


def torch_pin(repo: Path = REPO) -> str:
    try:
        found = re.search(r"^TORCH_PIN\s*:?=\s*(\S+)", (repo / "Makefile").read_text(), re.M)
    except OSError:
        found = None
    return found.group(1) if found else TORCH_PIN


def bundle_files(repo: Path = REPO) -> dict[str, Path]:
    """Archive name → file: the autograder package (sources and package data) and course.yml."""
    files: dict[str, Path] = {"course.yml": repo / "course.yml"}
    package = repo / "autograder"
    for path in sorted(package.rglob("*")):
        rel = path.relative_to(repo)
        if not path.is_file() or path.is_symlink() or "__pycache__" in rel.parts or path.suffix in (".pyc", ".pyo"):
            continue
        if any(part.startswith(".") for part in rel.parts):
            continue
        files[rel.as_posix()] = path
    leaked = [name for name in files if name.startswith("solutions/") or "/solutions/" in name]
    if leaked:
        raise RuntimeError(f"refusing to bundle solutions: {leaked}")
    return files


def _add(zf: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    zf.writestr(info, data)


def build(out: Path, repo: Path = REPO) -> Path:
    """Write the autograder zip to ``out`` (reproducible: fixed timestamps, sorted entries)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    files = bundle_files(repo)
    solutions = {hashlib.sha256(p.read_bytes()).digest() for p in (repo / "solutions").glob("*.py")}
    for name, path in files.items():
        if hashlib.sha256(path.read_bytes()).digest() in solutions:
            raise RuntimeError(f"refusing to bundle {name}: it is a copy of a reference solution")
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        _add(
            zf,
            "setup.sh",
            SETUP_SH.format(torch_pin=torch_pin(repo), torch_index=TORCH_INDEX, pip_pin=PIP_PIN).encode(),
            True,
        )
        _add(zf, "run_autograder", RUN_AUTOGRADER.encode(), True)
        _add(zf, "requirements.txt", ("\n".join(REQUIREMENTS) + "\n").encode())
        _add(zf, "requirements-torch.txt", ("\n".join(TORCH_REQUIREMENTS) + "\n").encode())
        for name in sorted(files):
            _add(zf, name, files[name].read_bytes())
    os.replace(tmp, out)
    return out


def cmd_build(args) -> int:
    out = build(Path(args.out))
    with zipfile.ZipFile(out) as zf:
        n = len(zf.namelist())
    print(
        f"wrote {out} ({n} files, {out.stat().st_size // 1024} KiB): upload it as the assignment's "
        "autograder (Ubuntu base image); it grades /autograder/submission and writes results.json"
    )
    return 0


# ───────────────────────────── running on Gradescope ─────────────────────────────


def gradescope_results(result, notes: list[str] | None = None) -> dict:
    """Gradescope's results.json for one SubmissionResult (the class grader's format when it is there)."""
    try:
        from .report import gradescope_json
    except ImportError:  # the class grader's report module is absent: the same fields, written here
        pass
    else:
        return gradescope_json(result, notes=notes)
    tests = []
    for stage in result.stages:
        for check in stage.checks:
            tests.append(
                {
                    "name": f"{stage.key}: {check.name}",
                    "score": round(check.points, 4),
                    "max_score": round(check.max_points, 4),
                    "status": "passed" if check.passed else "failed",
                    "output": "" if check.passed else check.message,
                    "visibility": "after_published" if check.hidden else "visible",
                }
            )
    return {
        "score": round(result.score, 4),
        "output": "\n".join(notes or []),
        "visibility": "visible",
        "tests": tests,
        "extra_data": {"seeds": {s.key: s.seed for s in result.stages}, "isolation": result.isolation},
    }


def _submission_folder(submission: Path, course) -> Path:
    """The folder holding the stage files: the submission itself, or its only sub-folder when the learner
    uploaded a zip of a folder."""
    wanted = {s.file for s in course.stages} | {Path(s.file).stem + ".ipynb" for s in course.stages}
    entries = [p for p in submission.iterdir() if not p.name.startswith(".") and p.name != "__MACOSX"]
    if any(p.name in wanted or p.suffix == ".ipynb" for p in entries if p.is_file()):
        return submission
    folders = [p for p in entries if p.is_dir() and not p.is_symlink()]
    if len(folders) == 1:
        return _submission_folder(folders[0], course)
    return submission


def _metadata(root: Path) -> dict:
    try:
        data = json.loads((root / "submission_metadata.json").read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _student_id(meta: dict) -> str:
    users = meta.get("users") or []
    if users and isinstance(users[0], dict):
        for key in ("email", "name", "id"):
            if users[0].get(key):
                return str(users[0][key])
    return str(meta.get("id") or "submission")


def _seed(meta: dict) -> int:
    """The base seed of the hidden inputs: from the submission id (a regrade draws the same inputs)."""
    if meta.get("id") is not None:
        return int.from_bytes(hashlib.sha256(f"gradescope:{meta['id']}".encode()).digest()[:4], "big") >> 1
    return secrets.randbits(31)


def _close_to_others(*folders: Path) -> None:
    """As root, in the reduced fallback (no bubblewrap, which would not mount them at all): only root may enter
    these folders of the autograder's own tree, so the sandbox's uid cannot read them."""
    if os.geteuid() != 0:
        return
    for folder in folders:
        try:
            os.chmod(folder, 0o700)
        except OSError:
            pass


def run(root: Path, *, timeout: float | None = None) -> dict:
    """Grade ``root/submission``; write and return ``root/results/results.json``."""
    import warnings

    from ..course import load_course
    from ..runner import grade
    from ..sandbox.errors import SandboxWarning
    from ..sandbox.host import Limits, Sandbox

    started = time.monotonic()
    root = Path(root)
    source, submission, results = root / "source", root / "submission", root / "results"
    results.mkdir(parents=True, exist_ok=True)
    course = load_course(source / "course.yml", check_files=False)
    meta = _metadata(root)
    folder, student = _submission_folder(submission, course), _student_id(meta)
    try:
        from .collect import collect_student
    except ImportError:  # without the class grader's collector: stage files only
        from ..runner import submission_from_folder

        sub, notes = submission_from_folder(course, folder, student), []
    else:
        collected = collect_student(course, folder, student)
        sub, notes = collected.submission(), list(collected.notes)
    limits = Limits(call_timeout=timeout) if timeout else Limits()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sandbox = Sandbox(limits).start()
    if sandbox.kind != "bwrap":
        _close_to_others(source, submission, results)
    for w in caught:
        if issubclass(w.category, SandboxWarning):
            print(f"WARNING: {w.message}", file=sys.stderr)
    try:
        result = grade(course, [sub], seed=_seed(meta), sandbox=sandbox)[0]
    finally:
        sandbox.close()
    notes += [str(w.message) for w in caught if issubclass(w.category, SandboxWarning)]
    data = gradescope_results(result, notes=notes)
    data.setdefault("extra_data", {})["sandbox"] = {k: v for k, v in sandbox.info.items()}
    data["execution_time"] = round(time.monotonic() - started, 2)
    tmp = results / f".results.json.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(data, indent=2, allow_nan=False))
    os.replace(tmp, results / "results.json")
    return data


def cmd_run(args) -> int:
    root = Path(args.root or os.environ.get("AUTOGRADER_ROOT") or DEFAULT_ROOT)
    data = run(root, timeout=args.timeout)
    print(
        f"score {data['score']}: {sum(t['status'] == 'passed' for t in data['tests'])} of {len(data['tests'])} "
        f"checks passed; wrote {root / 'results' / 'results.json'}",
        file=sys.stderr,
    )
    return 0
