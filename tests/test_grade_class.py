"""``python -m autograder grade``, end to end on a small class: the files it writes, what it reads, and that a
broken student costs only their own stages."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOL = ROOT / "solutions"
STAGES = ["loop_average", "tril_average"]  # two stages keep this test quick; the graders are the real ones


def grade(class_dir: Path, out: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "autograder", "grade", str(class_dir), "--out", str(out), "--jobs", "2"]
    for key in STAGES:
        cmd += ["--stage", key]
    return subprocess.run(
        cmd + list(extra),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=None if env is None else {**os.environ, **env},
    )


def make_class(root: Path) -> Path:
    cls = root / "class"
    ok = cls / "ok"
    ok.mkdir(parents=True)
    for f in ("01_loop_average.py", "02_tril_average.py"):
        shutil.copy(SOL / f, ok / f)
    bug = cls / "bug"
    shutil.copytree(ok, bug)
    text = (SOL / "02_tril_average.py").read_text()
    (bug / "02_tril_average.py").write_text(text.replace("torch.tril(ones)", "torch.triu(ones)"))
    crash = cls / "crash"
    shutil.copytree(ok, crash)
    (crash / "01_loop_average.py").write_text("import os\n\ndef causal_mean_loop(x):\n    os._exit(3)\n")
    (crash / "conftest.py").write_text("import os\nos._exit(0)\n")  # would end pytest if it were ever imported
    (crash / "torch.py").write_text("raise SystemExit\n")
    nb = cls / "nb"
    nb.mkdir()
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": (SOL / f).read_text()}
        for f in ("01_loop_average.py", "02_tril_average.py")
    ]
    cells.insert(
        1,
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": "%timeit causal_mean_loop(torch.randn(2, 3, 4))\nprint('demo')",
        },
    )
    (nb / "work.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}))
    (cls / "empty").mkdir()
    return cls


@pytest.mark.slow
def test_grade_a_small_class(tmp_path, course):
    cls = make_class(tmp_path)
    out = tmp_path / "out"
    proc = grade(cls, out, "--seed", "11")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"report:  {out / 'report.html'}" in proc.stdout

    with open(out / "grades.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["student", *course.keys, "total"]
    table = {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}
    assert sorted(table) == ["bug", "crash", "empty", "nb", "ok"]
    assert table["ok"]["total"] == table["nb"]["total"] == "20"
    assert table["ok"]["softmax_average"] == ""  # not asked for: left empty
    assert float(table["bug"]["tril_average"]) < 10 and table["bug"]["loop_average"] == "10"
    assert table["crash"]["loop_average"] == "0" and table["crash"]["tril_average"] == "10"  # only its own stage
    assert table["empty"]["total"] == "0"

    gs = json.loads((out / "bug" / "results.json").read_text())
    assert gs["score"] == pytest.approx(float(table["bug"]["total"]), abs=0.01)
    names = [t["name"] for t in gs["tests"]]
    assert all(n.split(": ", 1)[0] in STAGES for n in names)
    for t in gs["tests"]:
        assert {"name", "score", "max_score", "status", "output", "visibility"} <= set(t)
        assert t["status"] in ("passed", "failed")
    assert sum(t["max_score"] for t in gs["tests"]) == pytest.approx(20, abs=1e-3)
    assert set(gs["extra_data"]["seeds"]) == set(STAGES)
    failed = [t for t in gs["tests"] if t["status"] == "failed"]
    assert any("torch.triu" in (t["extra_data"].get("mistake") or "") for t in failed)

    crash = json.loads((out / "crash" / "result.json").read_text())
    assert any("conftest.py" in n and "torch.py" in n for n in crash["notes"])
    loop = next(s for s in crash["result"]["stages"] if s["key"] == "loop_average")
    assert any("exit" in c["message"] for c in loop["checks"])

    closing = " ".join(proc.stderr.split())  # rich wraps lines at the terminal's width
    assert "hangs and crashes: 0 stages ran out of time; 1 stage crashed: crash (loop_average)" in closing
    report = (out / "report.html").read_text()
    assert "upper instead of lower triangle" in report and "<svg" in report
    assert (out / "nb" / "feedback.html").is_file()
    assert json.loads((out / "run.json").read_text())["seed"] == 11
    assert not list(out.rglob("*.tmp"))


@pytest.mark.slow
def test_rerun_grades_only_what_changed(tmp_path):
    cls = make_class(tmp_path)
    shutil.rmtree(cls / "crash")
    out = tmp_path / "out"
    assert grade(cls, out).returncode == 0
    seed = json.loads((out / "run.json").read_text())["seed"]
    before = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/result.json")}

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    again = grade(cls, out, env={"TMPDIR": str(tmp)})
    assert again.returncode == 0 and "0 to grade" in again.stderr.replace("\n", " ")
    # the sandboxes started (on Linux) before the class was read are stopped, their folders removed
    assert list(tmp.iterdir()) == []
    assert json.loads((out / "run.json").read_text())["seed"] == seed  # the stored seed is reused
    (cls / "bug" / "02_tril_average.py").write_text((SOL / "02_tril_average.py").read_text())  # fixed
    third = grade(cls, out)
    assert third.returncode == 0 and "1 to grade" in third.stderr.replace("\n", " ")
    after = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/result.json")}
    assert [s for s in before if before[s] != after[s]] == ["bug"]
    with open(out / "grades.csv", newline="") as fh:
        assert {r["student"]: r["total"] for r in csv.DictReader(fh)}["bug"] == "20"


def test_bad_arguments_are_refused_before_anything_runs(tmp_path):
    (tmp_path / "cls").mkdir()
    run = lambda *a: subprocess.run(
        [sys.executable, "-m", "autograder", "grade", *a],
        cwd=ROOT,  # noqa: E731
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run(str(tmp_path / "nope"), "--out", str(tmp_path / "o")).returncode == 2
    assert run(str(tmp_path / "cls"), "--out", str(tmp_path / "o"), "--jobs", "0").returncode == 2
    proc = run(str(tmp_path / "cls"), "--out", str(tmp_path / "o"), "--stage", "no_such_stage")
    assert proc.returncode == 2 and "no_such_stage" in proc.stderr
    assert not (tmp_path / "o").exists()
    (tmp_path / "grades.csv").write_text("a file")
    for out in (tmp_path / "grades.csv", tmp_path / "grades.csv" / "sub"):  # --out naming a file, or inside one
        proc = run(str(tmp_path / "cls"), "--out", str(out))
        assert proc.returncode == 2 and "is a file, not a folder" in proc.stderr and "Traceback" not in proc.stderr
    assert (tmp_path / "grades.csv").read_text() == "a file"


def _stored_student(out: Path, course):
    """One graded student written to ``out`` as a run would (a hidden check failed), without grading."""
    from autograder.instructor import store
    from autograder.instructor.collect import Collected
    from autograder.instructor.report import gradescope_json
    from autograder.results import CheckResult, StageResult, SubmissionResult

    stage = course.stages[0]
    result = SubmissionResult(
        student="ann",
        stages=[
            StageResult(
                key=stage.key,
                title=stage.title,
                max_score=stage.points,
                seed=77,
                checks=[
                    CheckResult(name="public values", passed=True, points=6.0, max_points=6.0),
                    CheckResult(
                        name="HIDDEN-NAME",
                        passed=False,
                        points=0.0,
                        max_points=4.0,
                        hidden=True,
                        message="on x = HIDDEN-INPUT expected HIDDEN-EXPECTED",
                    ),
                ],
            )
        ],
    )
    store.save_student(out, result, fingerprint="fp", notes=[], layout="files", gradescope=gradescope_json(result))
    return [Collected(student="ann")], {"ann": "fp"}


@pytest.mark.parametrize("detail", [False, True])
def test_feedback_shows_hidden_checks_only_when_asked(tmp_path, course, detail, capsys):
    from autograder.cli import main
    from autograder.instructor.grade import GradeRun

    out = tmp_path / "out"
    subs, fps = _stored_student(out, course)
    run = GradeRun(course, tmp_path, out, quiet=True, hidden_detail=detail)
    run.seed = 5
    run.rebuild(subs, fps)
    page = (out / "ann" / "feedback.html").read_text()
    for secret in ("HIDDEN-NAME", "HIDDEN-INPUT", "HIDDEN-EXPECTED"):
        assert (secret in page) == detail, secret
    if not detail:
        assert "1 hidden check (4 pts): 0 passed (0 pts)" in page
    gradescope = json.loads((out / "ann" / "results.json").read_text())
    assert gradescope["tests"][1]["visibility"] == "after_published"
    assert "HIDDEN-INPUT" in (out / "report.html").read_text()  # the instructor sees everything
    with pytest.raises(SystemExit):
        main(["grade", "--help"])
    assert "--hidden-detail" in capsys.readouterr().out  # the instructor's switch


def _announced(run) -> str:
    import io

    from rich.console import Console

    run.err = Console(file=io.StringIO(), width=200)
    subs, todo, _ = run.plan()
    run.announce(subs, todo)
    return run.err.file.getvalue()


def test_the_terminal_names_wrapped_and_empty_students_and_a_new_seed(tmp_path, course):
    from autograder.instructor.grade import GradeRun

    cls = tmp_path / "class"
    (cls / "alice" / "attention-main").mkdir(parents=True)
    shutil.copy(SOL / "01_loop_average.py", cls / "alice" / "attention-main")
    for name in ("v1", "v2"):
        (cls / "bob" / name).mkdir(parents=True)
    out = tmp_path / "out"
    text = _announced(GradeRun(course, cls, out, seed=5))
    assert "nothing to grade for bob: no stage file or notebook found (it holds the folders v1/, v2/" in text
    assert "the files of 1 student were read from a wrapper folder" in text and "alice" in text
    assert "differs from the seed" not in text  # a first run
    assert "differs from the seed" not in _announced(GradeRun(course, cls, out))  # the stored seed, kept
    text = _announced(GradeRun(course, cls, out, seed=6))
    assert "seed 6 differs from the seed 5 of the earlier run" in text and "every student is graded again" in text


def test_the_closing_summary_counts_hangs_and_crashes(course):
    from autograder.instructor.report import failure_summary
    from autograder.results import CheckResult, StageResult, SubmissionResult
    from autograder.instructor.report import Graded

    def student(name, *failures):
        stages = []
        for stage, kinds in zip(course.stages, failures):
            stages.append(
                StageResult(
                    key=stage.key,
                    title=stage.title,
                    max_score=stage.points,
                    checks=[
                        CheckResult(name=f"c{i}", passed=kind is None, points=0.0, max_points=1.0, failure=kind)
                        for i, kind in enumerate(kinds)
                    ],
                )
            )
        return Graded(SubmissionResult(student=name, stages=stages))

    assert failure_summary([student("ok", [None, None])]) is None
    rows = [student("hang", ["timeout", "timeout", "timeout"], [None]), student("boom", [None, "crash"], ["crash"])]
    assert failure_summary(rows) == (
        "1 stage ran out of time: hang (loop_average); 2 stages crashed: boom (loop_average), boom (tril_average)"
    )


@pytest.mark.slow
def test_ctrl_c_leaves_no_temporary_folder_and_no_child_traceback(tmp_path):
    """Ctrl-C reaches the whole process group: the main process answers it, the judges (which ignore it) close
    their sandboxes when told to stop, so no traceback is printed and no sandbox folder is left behind."""
    import signal
    import time

    cls = tmp_path / "class"
    (cls / "ok").mkdir(parents=True)
    shutil.copy(SOL / "01_loop_average.py", cls / "ok")
    (cls / "hang").mkdir()
    (cls / "hang" / "01_loop_average.py").write_text("def causal_mean_loop(x):\n    while True:\n        pass\n")
    tmp = tmp_path / "tmp"  # the sandboxes' folders are made here (tempfile follows TMPDIR)
    tmp.mkdir()
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            str(cls),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--stage",
            "loop_average",
            "--timeout",
            "60",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "TMPDIR": str(tmp)},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 300
    while not (out / "ok" / "result.json").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert (out / "ok" / "result.json").exists()  # one graded; the other hangs (for 60 s)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    assert not list(tmp.glob("autograder-*"))
    assert not (out / "hang" / "result.json").exists()


def test_the_time_left_counts_pending_hangs():
    from autograder.instructor.grade import Eta, _eta_text

    eta = Eta(total=4, jobs=2, timeout=10.0)
    assert eta.seconds_left(0.0) is None and _eta_text(None) == "-:--:--"
    for student in ("a", "b"):
        eta.start(student, 0.0)
        eta.done(student, 1.0)  # a submission takes about 1 s
    eta.start("hang", 1.0)
    eta.start("quick", 5.5)
    # at 6 s "hang" has run 5 s, far past the usual 1 s: its judge is counted busy until 1 + 1 + 10 = 12 s
    assert eta.seconds_left(6.0) == pytest.approx(6.0)
    eta.done("quick", 6.5)
    assert eta.seconds_left(9.0) == pytest.approx(3.0)  # and the estimate counts down as the hang goes on
    eta.done("hang", 12.0)
    assert eta.seconds_left(12.0) == 0 and _eta_text(61.2) == "0:01:02"
