"""The learner's `check` and `hint`: full marks for the solutions, 0 and "not implemented" for the stubs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def autograder(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


@pytest.fixture(scope="module")
def solutions_json():
    proc = autograder("check", str(ROOT / "solutions"), "--json")
    return proc, json.loads(proc.stdout)


@pytest.fixture(scope="module")
def exercises_json():
    proc = autograder("check", str(ROOT / "exercises"), "--json")
    return proc, json.loads(proc.stdout)


def test_solutions_score_full_marks_on_every_stage(solutions_json, course):
    proc, data = solutions_json
    assert proc.returncode == 0, proc.stderr
    assert [s["key"] for s in data["stages"]] == course.keys, "every stage must have graders"
    for stage in data["stages"]:
        failed = [c for c in stage["checks"] if not c["passed"]]
        assert not failed, f"{stage['key']}: {failed}"
        assert stage["score"] == pytest.approx(stage["max_score"], abs=1e-3)
    assert data["score"] == pytest.approx(data["max_score"], abs=1e-3) == course.max_score


def test_json_output_has_the_documented_shape(solutions_json):
    _, data = solutions_json
    assert set(data) >= {"score", "max_score", "stages"}
    for stage in data["stages"]:
        assert set(stage) >= {"key", "score", "max_score", "checks"}
        assert stage["checks"], stage["key"]
        for c in stage["checks"]:
            assert set(c) >= {"name", "passed", "points", "message"}
        # a stage's points are shared among its checks
        assert sum(c["max_points"] for c in stage["checks"]) == pytest.approx(stage["max_score"], abs=1e-3)


def test_untouched_stubs_score_zero_and_say_not_implemented(exercises_json, course):
    proc, data = exercises_json
    assert proc.returncode == 1
    assert data["score"] == 0
    for stage in data["stages"]:
        assert stage["status"] == "not implemented", stage
        first_hint = course.stage(stage["key"]).hints[0]
        for c in stage["checks"]:
            assert not c["passed"]
            assert c["message"].startswith("not implemented yet"), c
            assert "Traceback" not in c["message"]
        assert first_hint in stage["checks"][0]["message"]


def test_json_mode_prints_only_json(exercises_json):
    proc, _ = exercises_json
    json.loads(proc.stdout)  # the whole of stdout parses


def test_table_output_names_the_first_failure_and_a_hint(folder_with, tmp_path):
    folder = folder_with({"02_tril_average.py": ROOT / "tests/mistakes/tril_average__triu.py"})
    proc = autograder("check", str(folder), "--stage", "tril_average", cwd=tmp_path)
    assert proc.returncode == 1
    out = proc.stdout
    assert "tril_average" in out and "first failing check" in out
    assert "upper instead of lower triangle" in out
    assert "autograder hint tril_average" in out
    assert "Traceback" not in out + proc.stderr


def test_hint_reveals_hints_one_by_one_and_remembers(tmp_path, course):
    hints = course.stage("softmax_average").hints
    first = autograder("hint", "softmax_average", cwd=tmp_path)
    second = autograder("hint", "softmax_average", cwd=tmp_path)
    assert first.returncode == second.returncode == 0
    assert hints[0] in first.stdout and "1/" in first.stdout
    assert hints[1] in second.stdout and "2/" in second.stdout
    for _ in range(len(hints)):
        last = autograder("hint", "softmax_average", cwd=tmp_path)
    assert all(h in last.stdout for h in hints)


def test_unknown_stage_is_a_clear_error(tmp_path):
    proc = autograder("hint", "no_such_stage", cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown stage 'no_such_stage'" in proc.stderr and "Traceback" not in proc.stderr


def test_missing_and_broken_files_cost_only_their_stage(folder_with):
    folder = folder_with({"01_loop_average.py": None, "02_tril_average.py": "def causal_mean_weights(T:\n"})
    proc = autograder("check", str(folder), "--json", "--stage", "loop_average")
    data = json.loads(proc.stdout)
    (stage,) = data["stages"]
    assert stage["status"] == "missing" and stage["score"] == 0
    assert "file missing: 01_loop_average.py" in stage["checks"][0]["message"]
    proc = autograder("check", str(folder), "--json", "--stage", "tril_average")
    (stage,) = json.loads(proc.stdout)["stages"]
    assert stage["status"] == "error" and stage["score"] == 0
    assert "could not be imported" in stage["checks"][0]["message"] and "SyntaxError" in stage["checks"][0]["message"]


@pytest.mark.parametrize("device", ["cdua", "cuda", "cuda:0"])
def test_a_device_not_present_is_a_clear_error_before_grading(device, tmp_path):
    """A typo or an absent device is the command's error, said in one line, not failed checks charged to the
    learner's code."""
    from autograder.runner import available_devices

    if device.split(":")[0] in available_devices():
        pytest.skip(f"this machine has {device}")
    proc = autograder("check", str(ROOT / "solutions"), "--stage", "loop_average", "--device", device, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""  # nothing was graded
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"autograder: --device {device}: ") and "devices here: cpu" in line


def test_a_python_without_the_dependencies_is_told_how_to_set_up():
    """``-S``: no site-packages, so neither torch nor rich is importable (the package itself is, from cwd)."""
    proc = subprocess.run([sys.executable, "-S", "-m", "autograder", "check"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "make setup" in line and "pip install -e ." in line and "rich" in line


def test_watch_rechecks_only_the_saved_stage(monkeypatch, tmp_path, course):
    """watch checks every stage once, then, for each change watchfiles reports, only the saved stage, and
    shows the whole table with the other stages' earlier results."""
    import watchfiles

    from autograder import cli
    from autograder.results import StageResult, SubmissionResult

    (tmp_path / "02_tril_average.py").write_text("")
    calls = []

    def fake_run_check(course_, folder, *, stages=None, **kwargs):
        calls.append(stages)
        keys = stages or course.keys
        return SubmissionResult(student="you", stages=[
            StageResult(key=k, title=k, max_score=1, note=f"run {len(calls)}") for k in keys])

    class NoSandbox:
        sandbox = None

        def ready(self):
            return True

        def close(self):
            pass

    watched = {}

    def fake_watch(folder, watch_filter, **kwargs):  # runs in watch's thread: checked below
        saved = str(tmp_path / "02_tril_average.py")
        watched.update(folder=Path(folder), saved=watch_filter(watchfiles.Change.modified, saved),
                       other=watch_filter(watchfiles.Change.modified, str(tmp_path / "notes.txt")))
        yield {(watchfiles.Change.modified, saved)}

    shown = []
    monkeypatch.setattr(cli, "run_check", fake_run_check)
    monkeypatch.setattr(cli, "EarlySandbox", NoSandbox)
    monkeypatch.setattr(watchfiles, "watch", fake_watch)
    monkeypatch.setattr("autograder.display.print_check",
                        lambda console, course_, result, hints: shown.append({s.key: s.note for s in result.stages}))
    assert cli.main(["watch", str(tmp_path)]) == 0
    assert watched == {"folder": tmp_path, "saved": True, "other": False}
    assert calls == [None, ["tril_average"]]
    assert shown[-1]["tril_average"] == "run 2"
    assert {k: v for k, v in shown[-1].items() if k != "tril_average"} == {
        k: "run 1" for k in course.keys if k != "tril_average"}


def test_watch_rechecks_a_stage_when_its_file_is_saved(tmp_path):
    """The real thing: a stub saved with the solution turns its stage green, without restarting watch."""
    import queue
    import threading

    folder = tmp_path / "work"
    folder.mkdir()
    stub = folder / "01_loop_average.py"
    shutil.copy(ROOT / "exercises" / "01_loop_average.py", stub)
    proc = subprocess.Popen([sys.executable, "-m", "autograder", "watch", str(folder)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    screens: queue.Queue = queue.Queue()

    def read():
        screen = []
        for line in proc.stdout:
            screen.append(line)
            if line.startswith("watching "):
                screens.put("".join(screen))
                screen = []
        screens.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        first = screens.get(timeout=300)
        assert first is not None and "not implemented yet" in first
        shutil.copy(ROOT / "solutions" / "01_loop_average.py", stub)
        second = screens.get(timeout=300)
        assert second is not None
        assert "loop_average" in second and "done" in second
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C, as a learner stops it: watch closes its sandbox and returns
        assert proc.wait(timeout=60) == 0


def test_a_notebook_check_cell_stops_an_endless_loop_once_per_stage(course):
    """A notebook's check runs the learner's functions in the kernel: a call that never returns is stopped
    after the time limit, and the stage's other checks are skipped instead of each waiting it out again."""
    import time

    from autograder.inprocess import run_stage

    def causal_mean_loop(x):
        while True:
            try:
                time.sleep(0.01)
            except Exception:  # learner code that swallows errors is interrupted all the same
                pass

    result = run_stage("loop_average", {"causal_mean_loop": causal_mean_loop}, seed=0, course=course, timeout=1)
    messages = [c.message for c in result.checks]
    assert not any(c.passed for c in result.checks) and result.score == 0
    assert sum(m.startswith("your code did not finish within 1 s") for m in messages) == 1, messages
    assert all(m.startswith("skipped: an earlier check of this stage did not finish in time") for m in messages
               if not m.startswith("your code did not finish")), messages


def test_ctrl_c_during_a_recheck_stops_watch(monkeypatch, tmp_path, course):
    """pytest catches a Ctrl-C that arrives while checks run and ends its session early; watch must stop all the
    same, not wait for the next save."""
    import threading
    import time

    import watchfiles

    from autograder import cli
    from autograder.results import StageResult, SubmissionResult

    calls = []
    rechecking = threading.Event()

    def fake_run_check(course_, folder, *, stages=None, **kwargs):
        calls.append(stages)
        if len(calls) == 2:  # Ctrl-C during the first re-check, swallowed as pytest does
            rechecking.set()
            time.sleep(0.5)
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)
            except KeyboardInterrupt:
                pass
        return SubmissionResult(student="you", stages=[
            StageResult(key=k, title=k, max_score=1) for k in stages or course.keys])

    class NoSandbox:
        sandbox = None

        def ready(self):
            return True

        def close(self):
            pass

    def fake_watch(folder, watch_filter, **kwargs):
        yield {(watchfiles.Change.modified, str(tmp_path / "02_tril_average.py"))}
        rechecking.wait(60)  # the second save comes while the first re-check runs
        yield {(watchfiles.Change.modified, str(tmp_path / "03_softmax_average.py"))}

    monkeypatch.setattr(cli, "run_check", fake_run_check)
    monkeypatch.setattr(cli, "EarlySandbox", NoSandbox)
    monkeypatch.setattr(watchfiles, "watch", fake_watch)
    monkeypatch.setattr("autograder.display.print_check", lambda *args: None)
    handler = signal.getsignal(signal.SIGINT)
    assert cli.main(["watch", str(tmp_path)]) == 0
    assert calls == [None, ["tril_average"]]  # the next save was not checked: watch had stopped
    assert signal.getsignal(signal.SIGINT) is handler
