"""Nothing lost: atomic per-student files, the stored seed, and a class run killed with ``kill -9`` halfway that,
started again, ends with exactly the files of a run that was never interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.instructor import store

ROOT = Path(__file__).resolve().parent.parent
SOL = ROOT / "solutions"
STAGES = ["loop_average", "tril_average"]


# ───────────────────────────── the store ─────────────────────────────


def test_atomic_write_replaces_whole_files_and_leaves_no_temporaries(tmp_path):
    target = tmp_path / "result.json"
    store.write_json(target, {"a": 1, "bad": float("nan")})
    assert json.loads(target.read_text()) == {"a": 1, "bad": "nan"}  # strict JSON: no NaN literal
    store.atomic_write(target, "second")
    assert target.read_text() == "second"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]
    assert oct(target.stat().st_mode & 0o777) != oct(0o600)  # readable like any other file
    (tmp_path / ".result.json.abc123.tmp").write_text("half a file from a killed run")
    (tmp_path / "s1").mkdir()
    (tmp_path / "s1" / ".results.json.x.tmp").write_text("{")
    assert store.clean_temporaries(tmp_path) == 2


def test_the_seed_is_chosen_once_and_reused(tmp_path):
    out = tmp_path / "out"
    first = store.prepare(out, None, "attention")
    assert store.prepare(out, None, "attention") == first
    assert store.prepare(out, 42, "attention") == 42  # an explicit seed wins and is stored
    assert store.prepare(out, None, "attention") == 42


def test_fingerprints_change_with_what_a_grade_depends_on(course):
    g = store.graders_hash(course.path)
    assert store.graders_hash(course.path) == g
    base = store.run_fingerprint("files", g, 1, {"timeout": None})
    assert store.run_fingerprint("files", g, 1, {"timeout": None}) == base
    assert store.run_fingerprint("other files", g, 1, {"timeout": None}) != base
    assert store.run_fingerprint("files", g + "x", 1, {"timeout": None}) != base
    assert store.run_fingerprint("files", g, 2, {"timeout": None}) != base
    assert store.run_fingerprint("files", g, 1, {"timeout": 3}) != base


def test_every_engine_file_the_fingerprint_names_exists():
    """The graders' hash covers the engine's files by name; a name left behind by a move would drop a file from it
    without a word."""
    missing = [f for f in store.ENGINE_FILES if not (store.PACKAGE / f).is_file()]
    assert not missing, missing


# ───────────────────────────── kill -9, then resume ─────────────────────────────


def make_class(root: Path, n: int = 8) -> Path:
    """Students whose stage 1 sleeps a little at import, so that a run is still going when the first result
    lands; some have a mistake, one a file that ends its process."""
    cls = root / "class"
    for i in range(n):
        folder = cls / f"s{i}"
        folder.mkdir(parents=True)
        loop = (SOL / "01_loop_average.py").read_text()
        (folder / "01_loop_average.py").write_text("import time\ntime.sleep(0.4)\n" + loop)
        tril = (SOL / "02_tril_average.py").read_text()
        if i % 3 == 1:
            tril = tril.replace("torch.tril(ones)", "torch.triu(ones)")
        if i == 5:
            tril = "import os\nos._exit(0)\n"
        (folder / "02_tril_average.py").write_text(tril)
    return cls


def command(cls: Path, out: Path, *extra: str) -> list[str]:
    cmd = [sys.executable, "-m", "autograder", "grade", str(cls), "--out", str(out), "--jobs", "2", "--quiet"]
    for key in STAGES:
        cmd += ["--stage", key]
    return cmd + list(extra)


def snapshot(out: Path) -> dict[str, object]:
    files = {}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            rel = path.relative_to(out).as_posix()
            files[rel] = json.loads(path.read_text()) if path.suffix == ".json" else path.read_text()
    return files


def wait_for_first_result(proc: subprocess.Popen, out: Path) -> None:
    deadline = time.monotonic() + 300
    while not list(out.glob("*/result.json")):
        assert proc.poll() is None, "the run ended before its first result was seen"
        assert time.monotonic() < deadline, "no result after 300 s"
        time.sleep(0.02)


def same_as_uninterrupted(cls: Path, out: Path, clean_out: Path, seed: int, what: str) -> dict[str, object]:
    """Grade ``cls`` again into ``clean_out`` with ``seed``, uninterrupted; every file must equal ``out``'s."""
    clean = subprocess.run(
        command(cls, clean_out, "--seed", str(seed)), cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert clean.returncode == 0, clean.stderr[-3000:]
    a, b = snapshot(out), snapshot(clean_out)
    assert sorted(a) == sorted(b)
    for name in a:
        assert a[name] == b[name], f"{name} differs between {what} and an uninterrupted one"
    assert len([n for n in a if n.endswith("/result.json")]) == 8
    return a


def gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


@pytest.mark.slow
def test_kill_9_halfway_then_resume_gives_exactly_the_uninterrupted_results(tmp_path):
    cls = make_class(tmp_path)
    killed_out, clean_out = tmp_path / "killed", tmp_path / "clean"

    proc = subprocess.Popen(
        command(cls, killed_out), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    wait_for_first_result(proc, killed_out)
    os.kill(proc.pid, signal.SIGKILL)  # the main process only: its judges must die with it
    proc.wait()
    deadline = time.monotonic() + 30
    while not gone(proc.pid):
        assert time.monotonic() < deadline, "judge processes outlived the killed run"
        time.sleep(0.1)
    done = len(list(killed_out.glob("*/result.json")))
    assert 0 < done < 8, f"{done} results when killed: not halfway"
    seed = json.loads((killed_out / "run.json").read_text())["seed"]

    resumed = subprocess.run(command(cls, killed_out), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    a = same_as_uninterrupted(cls, killed_out, clean_out, seed, "the resumed run")
    five = a["s5/result.json"]["result"]["stages"]
    assert five[0]["score"] == 10 and five[1]["score"] == 0  # its crash cost only its own stage


def _children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(b")", 1)[1].split()[1]) == pid:
                found.append(int(name))
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="judges are forked from one launcher on Linux only")
def test_a_judge_killed_mid_run_costs_its_students_nothing(tmp_path):
    """The judges are forked from one launcher process (which started their sandboxes and imported torch for
    all of them): one killed halfway is reported, its students are graded again in the same run, and the files
    end exactly as those of a run where nothing happened."""
    cls = make_class(tmp_path)
    out, clean_out = tmp_path / "out", tmp_path / "clean"
    proc = subprocess.Popen(
        command(cls, out, "--seed", "5"), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    wait_for_first_result(proc, out)
    # forked, launcher and judges alike: they run the main process's command line (the workers run bwrap's)
    launchers = [p for p in _children(proc.pid) if _cmdline(p) == _cmdline(proc.pid)]
    judges = [p for launcher in launchers for p in _children(launcher) if _cmdline(p) == _cmdline(proc.pid)]
    assert len(launchers) == 1 and len(judges) == 2, (launchers, judges)
    os.kill(judges[0], signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr[-3000:]
    assert "the judge process stopped (exit code -9)" in stderr
    same_as_uninterrupted(cls, out, clean_out, 5, "the run with a killed judge")


def test_a_result_saved_but_never_reported_counts_as_graded(tmp_path, course, monkeypatch):
    """A judge killed between saving a student's result and reporting it (the report is sent by a thread of the
    judge's queue, which dies with it) leaves a current result on disk and the student among the failures: the
    run trusts the disk, does not grade the student again, and ends with exit code 0."""
    from autograder.instructor import grade as grade_mod
    from autograder.instructor.report import gradescope_json
    from autograder.results import CheckResult, StageResult, SubmissionResult

    cls = tmp_path / "class"
    for name in ("ann", "bob"):
        (cls / name).mkdir(parents=True)
        (cls / name / "01_loop_average.py").write_text((SOL / "01_loop_average.py").read_text())
    out = tmp_path / "out"
    rounds: list[list[str]] = []

    def killed_after_saving(self, todo, fps, progress=None, task=None):
        rounds.append([s.student for s in todo])
        stage = course.stages[0]
        for sub in todo:
            check = CheckResult(name="values", passed=True, points=stage.points, max_points=stage.points)
            stages = [StageResult(key=stage.key, title=stage.title, max_score=stage.points, seed=1, checks=[check])]
            result = SubmissionResult(student=sub.student, stages=stages)
            store.save_student(
                out, result, fingerprint=fps[sub.student], notes=[], layout="files", gradescope=gradescope_json(result)
            )
        self.failures["ann"] = "the judge process stopped (exit code -9)"  # its "done" never arrived

    monkeypatch.setattr(grade_mod, "_can_share_start", lambda: False)
    monkeypatch.setattr(grade_mod.GradeRun, "grade", killed_after_saving)
    run = grade_mod.GradeRun(course, cls, out, seed=3, quiet=True)
    assert run.run() == 0
    assert rounds == [["ann", "bob"]] and run.failures == {} and sorted(run.graded_now) == ["ann", "bob"]
    # a student whose result is not on disk is still reported, and graded again only by a retry round
    (out / "ann" / "result.json").unlink()
    monkeypatch.setattr(grade_mod.GradeRun, "grade", lambda self, todo, fps, *a: self.failures.update(ann="lost"))
    assert grade_mod.GradeRun(course, cls, out, seed=3, quiet=True).run() == 1
