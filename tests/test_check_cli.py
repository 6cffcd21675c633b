"""The learner's `check` and `hint`: full marks for the solutions, 0 and "not implemented" for the stubs."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def autograder(*args, cwd=ROOT, state=None):
    """``python -m autograder ARGS`` with its progress store in ``state`` (default: CWD/.autograder, or a fresh
    folder when CWD is the repository)."""
    if state is None:
        state = Path(tempfile.mkdtemp(prefix="ag-state-")) if Path(cwd) == ROOT else Path(cwd) / ".autograder"
    env = dict(os.environ, AUTOGRADER_STATE=str(state))
    return subprocess.run(
        [sys.executable, "-m", "autograder", *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=env
    )


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
    assert "autograder hint 2" in out
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


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_printed_seed_draws_the_same_inputs_again(folder_with, tmp_path):
    """The command printed with a failure on random inputs reproduces that failure exactly."""
    folder = folder_with({"01_loop_average.py": ROOT / "tests/mistakes/loop_average__sum_not_mean.py"})
    first = autograder("check", folder.name, "--stage", "1", "-v", cwd=folder.parent)
    command = re.search(r"`python -m autograder (check [^`]*)`", first.stdout)
    assert command, first.stdout
    assert "--seed" in command.group(1)
    again = autograder(*command.group(1).split(), "-v", cwd=folder.parent)
    assert again.stdout == first.stdout  # the same inputs, values, errors and seed
    other = autograder("check", folder.name, "--stage", "1", "-v", "--seed", "12345", cwd=folder.parent)
    assert other.stdout != first.stdout


def test_verbose_shows_every_failing_check(folder_with, tmp_path):
    folder = folder_with({"01_loop_average.py": ROOT / "tests/mistakes/loop_average__sum_not_mean.py"})
    data = json.loads(autograder("check", str(folder), "--stage", "1", "--json", "--seed", "7").stdout)
    failing = [c["name"] for c in data["stages"][0]["checks"] if not c["passed"]]
    assert len(failing) > 1
    short = autograder("check", str(folder), "--stage", "1", "--seed", "7", cwd=tmp_path).stdout
    full = autograder("check", str(folder), "--stage", "1", "--seed", "7", "-v", cwd=tmp_path).stdout
    assert [n for n in failing if n in short] == failing[:1]
    assert f"and {len(failing) - 1} more" in _words(short)
    assert all(n in _words(full) for n in failing), full


def test_stage_numbers_work_wherever_keys_do(folder_with, tmp_path, course):
    proc = autograder("check", str(folder_with()), "--stage", "6", "--json", "--public-only")
    assert [s["key"] for s in json.loads(proc.stdout)["stages"]] == ["self_attention"]
    hint = autograder("hint", "6", cwd=tmp_path)
    assert hint.returncode == 0 and course.stage("self_attention").hints[0] in hint.stdout
    bad = autograder("hint", str(len(course.all_stages) + 1), cwd=tmp_path)
    assert bad.returncode == 2 and "1 loop_average" in bad.stderr


def test_a_hint_answers_the_latest_failing_check(folder_with, tmp_path, course):
    """After `check` names a known mistake, `hint` gives the hint course.yml names for it, not hint 1."""
    hints = course.stage("tril_average").hints
    folder = folder_with({"02_tril_average.py": ROOT / "tests/mistakes/tril_average__triu.py"})
    check = autograder("check", str(folder), "--stage", "2", cwd=tmp_path)
    assert "upper instead of lower triangle" in check.stdout
    assert "shows a hint for" in _words(check.stdout)
    hint = autograder("hint", "2", cwd=tmp_path)
    assert hints[1] in hint.stdout and "Hint 2/" in hint.stdout
    assert 'for the known mistake "upper instead of lower triangle (torch.triu)"' in hint.stdout, hint.stdout
    nxt = autograder("hint", "2", cwd=tmp_path)  # then another one, not the same again
    assert "Hint 2/" not in nxt.stdout and "Hint " in nxt.stdout


def test_no_hint_is_the_solution(course):
    """Hints teach: none of them holds a statement of the solution's code (spaces ignored)."""
    import ast

    for stage in course.stages:
        tree = ast.parse((ROOT / "solutions" / stage.file).read_text())
        statements = set()
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Return, ast.Assign, ast.AugAssign, ast.For)):
                        text = "".join(ast.unparse(node).split("\n")[0].split())
                        if len(text) >= 20:
                            statements.add(text.rstrip(":"))
        for number, hint in enumerate(stage.hints, 1):
            flat = "".join(hint.split())
            assert not [s for s in statements if s in flat], (stage.key, number, hint)
        last = stage.hints[-1]
        assert "".join(last.split()) not in "".join((ROOT / "solutions" / stage.file).read_text().split())


def test_one_stage_with_full_marks_is_not_every_stage(tmp_path):
    proc = autograder("check", str(ROOT / "solutions"), "--stage", "loop_average", "--public-only", cwd=tmp_path)
    assert proc.returncode == 0
    assert "Every stage has full marks" not in proc.stdout
    assert "Stage 1 has full marks" in proc.stdout


def test_a_file_that_does_not_import_is_not_shown_as_a_failing_check(folder_with, tmp_path):
    folder = folder_with({"02_tril_average.py": "def causal_mean_weights(T:\n"})
    out = _words(autograder("check", str(folder), "--stage", "2", cwd=tmp_path).stdout)
    assert "02_tril_average.py could not be imported" in out and "SyntaxError" in out
    assert "first failing check" not in out


def test_check_and_the_notebooks_share_one_progress_store(folder_with, tmp_path, monkeypatch, course):
    from autograder import inprocess, progress

    state = tmp_path / "state"
    folder = folder_with({"01_loop_average.py": ROOT / "tests/mistakes/loop_average__sum_not_mean.py"})
    autograder("check", str(folder), "--stage", "1", "--public-only", state=state)
    monkeypatch.setenv("AUTOGRADER_STATE", str(state))
    namespace: dict = {}
    exec((ROOT / "solutions" / course.stage("tril_average").file).read_text(), namespace)
    inprocess.check_stage("2", namespace, show=False)  # a stage number works in notebooks too
    table = {s.key: (s.score, s.status) for s in progress.progress_result(course).stages}
    assert table["loop_average"][1] != "missing" and table["loop_average"][0] < 10  # what `check` saw
    assert table["tril_average"][0] == pytest.approx(10)  # what the notebook saw
    assert table["softmax_average"][1] == "missing"


def test_a_missing_function_is_not_reported_as_raised(folder_with):
    folder = folder_with(
        {
            "02_tril_average.py": "import torch\n\n\ndef causal_mean_weights(T, *, device=None, "
            "dtype=None):\n    w = torch.ones(T, T, device=device, dtype=dtype).tril()\n"
            "    return w / w.sum(-1, keepdim=True)\n"
        }
    )
    data = json.loads(autograder("check", str(folder), "--stage", "2", "--json", "--public-only").stdout)
    messages = [c["message"] for c in data["stages"][0]["checks"] if not c["passed"]]
    assert messages and any("causal_mean_matmul is not defined in your file" in m for m in messages), messages
    assert not [m for m in messages if "raised MissingName" in m], messages


@pytest.mark.parametrize(
    "stage, file, function",
    [("2", "02_tril_average.py", "causal_mean_matmul"), ("4", "04_dot_product_attention.py", "context_vectors")],
)
def test_an_exception_names_the_call_and_the_input_shapes(folder_with, stage, file, function):
    source = (
        (ROOT / "solutions" / file)
        .read_text()
        .replace(f"def {function}(x", f"def {function}(x, *_):\n    raise RuntimeError('boom')\n\n\ndef _unused(x")
    )
    folder = folder_with({file: source})
    data = json.loads(autograder("check", str(folder), "--stage", stage, "--json", "--public-only").stdout)
    messages = [c["message"] for c in data["stages"][0]["checks"] if not c["passed"]]
    assert messages
    for message in messages:
        assert re.match(
            rf"{function}\(<tensor \([0-9, ]+\) float(32|64)[^>]*>\): your code raised RuntimeError: boom", message
        ), message


def test_every_hint_for_pattern_names_a_real_check_or_mistake(course):
    """A ``hint_for`` entry that matches no check name and no known mistake would never be shown."""
    graders = ROOT / "autograder" / "graders"
    # the graders' shared modules (where the known mistakes' names are written) and the check helpers
    shared = "".join(
        p.read_text() for p in [*sorted(graders.glob("*.py")), ROOT / "autograder" / "checks" / "__init__.py"]
    )
    for stage in course.stages:
        text = shared + "".join(
            p.read_text()
            for p in [
                graders / "public" / f"test_{stage.key}.py",
                graders / "hidden" / f"test_{stage.key}.py",
                ROOT / "autograder" / "oracles" / f"{stage.key}.py",
            ]
            if p.is_file()
        )
        for pattern, number in stage.hint_for:
            assert pattern.lower() in text.lower(), (stage.key, pattern)
            assert 1 <= number <= len(stage.hints)


def test_an_untouched_stub_gets_the_first_hint(tmp_path):
    proc = autograder("check", str(ROOT / "exercises"), "--stage", "1", "--public-only", cwd=tmp_path)
    assert "not implemented yet" in proc.stdout
    hint = autograder("hint", "1", cwd=tmp_path)
    assert "Hint 1/" in hint.stdout and ", for " not in hint.stdout, hint.stdout


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
    proc = subprocess.run(
        [sys.executable, "-S", "-m", "autograder", "check"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "make setup" in line and "pip install -e ." in line and "rich" in line


def test_the_dependency_check_knows_every_dependency_of_a_release_and_of_the_course():
    tomllib = pytest.importorskip("tomllib")
    from autograder.__main__ import REQUIRED

    def imported(pyproject: Path) -> set[str]:
        names = {
            re.split(r"[<>=;\s]", d)[0].lower() for d in tomllib.loads(pyproject.read_text())["project"]["dependencies"]
        }
        return {{"pyyaml": "yaml"}.get(n, n) for n in names}

    assert imported(ROOT / "autograder" / "templates" / "release" / "pyproject.toml") == {*REQUIRED, "watchfiles"}
    assert imported(ROOT / "pyproject.toml") == {*REQUIRED, "watchfiles"}


def test_watch_without_watchfiles_says_so_in_one_line(monkeypatch, capsys):
    from autograder import cli

    monkeypatch.setitem(sys.modules, "watchfiles", None)  # import watchfiles raises ImportError
    assert cli.main(["watch", str(ROOT / "solutions")]) == 2
    err = capsys.readouterr().err
    (line,) = err.strip().splitlines()
    assert "watchfiles" in line and "make setup" in line and "Traceback" not in err


class NoSandbox:
    """Stands in for cli.EarlySandbox where run_check is faked: nothing to start or close."""

    sandbox = None

    def ready(self):
        return True

    def close(self):
        pass


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
        return SubmissionResult(
            student="you", stages=[StageResult(key=k, title=k, max_score=1, note=f"run {len(calls)}") for k in keys]
        )

    watched = {}

    def fake_watch(folder, watch_filter, **kwargs):  # runs in watch's thread: checked below
        saved = str(tmp_path / "02_tril_average.py")
        watched.update(
            folder=Path(folder),
            saved=watch_filter(watchfiles.Change.modified, saved),
            other=watch_filter(watchfiles.Change.modified, str(tmp_path / "notes.txt")),
        )
        yield {(watchfiles.Change.modified, saved)}

    shown = []
    monkeypatch.setattr(cli, "run_check", fake_run_check)
    monkeypatch.setattr(cli, "EarlySandbox", NoSandbox)
    monkeypatch.setattr(watchfiles, "watch", fake_watch)
    monkeypatch.setattr(
        "autograder.display.print_check",
        lambda console, course_, result, hints, **kw: shown.append({s.key: s.note for s in result.stages}),
    )
    assert cli.main(["watch", str(tmp_path)]) == 0
    assert watched == {"folder": tmp_path, "saved": True, "other": False}
    assert calls == [None, ["tril_average"]]
    assert shown[-1]["tril_average"] == "run 2"
    assert {k: v for k, v in shown[-1].items() if k != "tril_average"} == {
        k: "run 1" for k in course.keys if k != "tril_average"
    }


def test_a_watcher_that_fails_is_said_in_one_line(monkeypatch, tmp_path, course, capsys):
    """When the file watcher stops on an error (the folder removed, the OS out of watches), watch says so in one
    line, after the saves it did report, and exits 1: no thread traceback, no silent stop."""
    import watchfiles

    from autograder import cli
    from autograder.results import StageResult, SubmissionResult

    calls = []

    def fake_run_check(course_, folder, *, stages=None, **kwargs):
        calls.append(stages)
        return SubmissionResult(student="you", stages=[StageResult(key=k, title=k, max_score=1) for k in course.keys])

    def failing_watch(folder, watch_filter, **kwargs):
        yield {(watchfiles.Change.modified, str(tmp_path / "02_tril_average.py"))}
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(cli, "run_check", fake_run_check)
    monkeypatch.setattr(cli, "EarlySandbox", NoSandbox)
    monkeypatch.setattr(watchfiles, "watch", failing_watch)
    monkeypatch.setattr("autograder.display.print_check", lambda *a, **k: None)
    assert cli.main(["watch", str(tmp_path)]) == 1
    assert calls == [None, ["tril_average"]]
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"autograder: stopped watching {tmp_path}/: OSError") and "watch limit" in line


def test_saves_reported_during_a_recheck_are_rechecked_together_and_the_end_comes_after_them():
    """merged_saves: every batch waiting is merged into one re-check; the watcher's end (None) or failure
    (WatchFailed) is read only after the saves reported before it, and a failure is raised."""
    import queue

    from autograder.cli import WatchFailed, merged_saves

    def reports(*items):
        q: queue.Queue = queue.Queue()
        for item in items:
            q.put(item)
        return q

    a, b, c = {("m", "01_loop_average.py")}, {("m", "02_tril_average.py")}, {("m", "01_loop_average.py")}
    assert list(merged_saves(reports(a, b, c, None))) == [a | b]
    assert list(merged_saves(reports(None))) == []
    got = []
    with pytest.raises(WatchFailed, match="gone"):
        for batch in merged_saves(reports(a, b, WatchFailed("gone"), None)):
            got.append(batch)
    assert got == [a | b]
    with pytest.raises(WatchFailed):
        list(merged_saves(reports(WatchFailed("gone"), None)))


def test_watch_rechecks_a_stage_when_its_file_is_saved(tmp_path):
    """The real thing: a stub saved with the solution turns its stage green, without restarting watch."""
    import queue
    import threading

    folder = tmp_path / "work"
    folder.mkdir()
    stub = folder / "01_loop_average.py"
    shutil.copy(ROOT / "exercises" / "01_loop_average.py", stub)
    proc = subprocess.Popen(
        [sys.executable, "-m", "autograder", "watch", str(folder)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
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
    assert all(
        m.startswith("skipped: an earlier check of this stage did not finish in time")
        for m in messages
        if not m.startswith("your code did not finish")
    ), messages


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
        return SubmissionResult(
            student="you", stages=[StageResult(key=k, title=k, max_score=1) for k in stages or course.keys]
        )

    def fake_watch(folder, watch_filter, **kwargs):
        yield {(watchfiles.Change.modified, str(tmp_path / "02_tril_average.py"))}
        rechecking.wait(60)  # the second save comes while the first re-check runs
        yield {(watchfiles.Change.modified, str(tmp_path / "03_softmax_average.py"))}

    monkeypatch.setattr(cli, "run_check", fake_run_check)
    monkeypatch.setattr(cli, "EarlySandbox", NoSandbox)
    monkeypatch.setattr(watchfiles, "watch", fake_watch)
    monkeypatch.setattr("autograder.display.print_check", lambda *args, **kwargs: None)
    handler = signal.getsignal(signal.SIGINT)
    assert cli.main(["watch", str(tmp_path)]) == 0
    assert calls == [None, ["tril_average"]]  # the next save was not checked: watch had stopped
    assert signal.getsignal(signal.SIGINT) is handler


def _record_many(state: str, key: str, rounds: int) -> None:
    os.environ["AUTOGRADER_STATE"] = state
    from autograder import progress
    from autograder.course import load_course
    from autograder.results import StageResult

    course = load_course()
    for n in range(rounds):
        progress.record(course, [StageResult(key=key, title=key, max_score=10, seed=n)])
        progress.mark_shown(course, key, n + 1)


def test_checks_run_at_the_same_time_keep_each_others_results(tmp_path, monkeypatch, course):
    """Two notebooks' check cells (or watch and a notebook) write the one store at once: each process records
    its own stage and hints over and over; in the end every stage holds its own last result and every hint."""
    import multiprocessing

    from autograder import progress

    keys = [s.key for s in course.stages[:6]]
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_record_many, args=(str(tmp_path), key, 25)) for key in keys]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    monkeypatch.setenv("AUTOGRADER_STATE", str(tmp_path))
    assert {k: v["seed"] for k, v in progress.load_progress(course).items()} == {k: 24 for k in keys}
    assert progress.hints_shown(course) == {k: list(range(1, 26)) for k in keys}
