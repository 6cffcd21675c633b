"""The class grader's output folder: atomic writes, the run's seed, and what can be skipped on a rerun.

Layout of ``OUT_DIR``::

    run.json                 the base seed (chosen on the first run, reused by every later one)
    grades.csv               rebuilt from the per-student files at the end of every run
    report.html              idem
    <student>/result.json    our SubmissionResult (+ the run fingerprint and notes): the record of truth
    <student>/results.json   the same result in Gradescope's format
    <student>/feedback.html  the student's own page of the report

Every file is written to a temporary name in the same folder and moved into place with ``os.replace``, so a
reader (or a rerun after ``kill -9``) sees either the old file or the new one, never half of one.
``result.json`` is written last: a student counts as graded once it exists with the current fingerprint.

A student's *run fingerprint* hashes what their grade depends on: the files read from their folder, the graders,
oracles and grading engine, ``course.yml``, the seed and the options that change verdicts (devices, timeout,
public-only). When it matches the stored one the student is skipped; when anything changes, they are graded
again. No clock time is stored in these files, so an interrupted-then-resumed run writes exactly the same bytes
as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
import tempfile
from pathlib import Path

from ..results import SubmissionResult

FORMAT = 1
RUN_FILE = "run.json"
RESULT_FILE = "result.json"
GRADESCOPE_FILE = "results.json"
FEEDBACK_FILE = "feedback.html"
PACKAGE = Path(__file__).resolve().parents[1]
_UMASK = os.umask(0)
os.umask(_UMASK)
# the code a verdict depends on (reports and collection are not: collection's output is hashed per student)
ENGINE_FILES = (
    "checks/__init__.py",
    "oracle.py",
    "runner.py",
    "fixtures.py",
    "sandbox/host.py",
    "sandbox/proxy.py",
    "sandbox/values.py",
    "sandbox/errors.py",
    "sandbox/evidence.py",
    "runtime/wire.py",
    "runtime/torchrefs.py",
    "runtime/recorder.py",
    "runtime/executor.py",
    "runtime/zygote.py",
    "results.py",
    "course.py",
)


def atomic_write(path: Path, data: str | bytes, *, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are meant to be shared like any file
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def clean_temporaries(out_dir: Path) -> int:
    """Remove temporary files a killed run left behind (``.<name>.*.tmp``); returns how many."""
    n = 0
    for folder in [out_dir, *[p for p in out_dir.iterdir() if p.is_dir() and not p.is_symlink()]]:
        for p in folder.glob(".*.tmp"):
            try:
                p.unlink()
                n += 1
            except OSError:
                pass
    return n


def write_json(path: Path, data, *, fsync: bool = False) -> None:
    """Strict JSON (NaN and infinities become the strings "nan", "inf", "-inf"), written atomically."""
    atomic_write(path, json.dumps(finite(data), indent=1, allow_nan=False) + "\n", fsync=fsync)


def finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


# ───────────────────────────── fingerprints ─────────────────────────────


def graders_hash(course_path: Path | None = None) -> str:
    """A hash of everything a verdict depends on besides the submission: course.yml, the grader modules, the
    oracles (and snapshots), and the grading engine's modules."""
    h = hashlib.sha256(f"graders-v{FORMAT}\0".encode())
    files: list[Path] = []
    if course_path is not None:
        files.append(Path(course_path))
    for sub in ("graders", "oracles", "data"):
        folder = PACKAGE / sub
        if folder.is_dir():
            files += sorted(
                p
                for p in folder.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".json", ".yml", ".npz", ".pt")
            )
    files += [PACKAGE / f for f in ENGINE_FILES if (PACKAGE / f).is_file()]
    for p in files:
        try:
            rel = p.relative_to(PACKAGE).as_posix()
        except ValueError:
            rel = p.name
        h.update(rel.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def run_fingerprint(content_hash: str, graders: str, seed: int, options: dict) -> str:
    h = hashlib.sha256(b"run-v1\0")
    for part in (content_hash, graders, str(seed), json.dumps(options, sort_keys=True)):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


# ───────────────────────────── the run's state ─────────────────────────────


def stored_seed(out_dir: Path) -> int | None:
    """The base seed an earlier run stored in ``out_dir``, or None."""
    try:
        state = json.loads((Path(out_dir) / RUN_FILE).read_text())
    except (OSError, ValueError):
        return None
    seed = state.get("seed") if isinstance(state, dict) else None
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def prepare(out_dir: Path, seed: int | None, course_id: str) -> int:
    """Create ``out_dir`` and return the base seed: ``seed`` when given (stored), else the stored one, else a
    fresh random one (stored before anything is graded)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    clean_temporaries(out_dir)
    path = out_dir / RUN_FILE
    state = {}
    try:
        state = json.loads(path.read_text())
        if not isinstance(state, dict):
            state = {}
    except (OSError, ValueError):
        state = {}
    stored = state.get("seed")
    if seed is None:
        if isinstance(stored, int):
            return stored
        seed = secrets.randbits(31)
    if seed != stored:
        write_json(path, {"format": FORMAT, "course": course_id, "seed": int(seed)}, fsync=True)
    return int(seed)


def student_dir(out_dir: Path, student: str) -> Path:
    return Path(out_dir) / student


def load_record(out_dir: Path, student: str) -> dict | None:
    """The stored ``result.json`` of a student, or None (missing, unreadable, another format)."""
    path = student_dir(out_dir, student) / RESULT_FILE
    try:
        if path.is_symlink():
            return None
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or "result" not in data:
        return None
    return data


def is_current(out_dir: Path, student: str, fingerprint: str) -> bool:
    record = load_record(out_dir, student)
    return record is not None and record.get("run_fingerprint") == fingerprint


def make_record(result: SubmissionResult, *, fingerprint: str, notes: list[str], layout: str) -> dict:
    return {
        "format": FORMAT,
        "run_fingerprint": fingerprint,
        "layout": layout,
        "notes": list(notes),
        "result": result_json(result),
    }


def result_json(result: SubmissionResult) -> dict:
    return result.to_json()


def result_from_record(record: dict) -> SubmissionResult:
    return SubmissionResult.from_json(record["result"])


def save_student(
    out_dir: Path, result: SubmissionResult, *, fingerprint: str, notes: list[str], layout: str, gradescope: dict
) -> None:
    """Write a finished student's files: the Gradescope file first, ``result.json`` (the marker) last."""
    folder = student_dir(out_dir, result.student)
    if folder.is_symlink():
        folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / GRADESCOPE_FILE, gradescope)
    write_json(folder / RESULT_FILE, make_record(result, fingerprint=fingerprint, notes=notes, layout=layout))
