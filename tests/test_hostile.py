"""The hostile-submission suite: attackers graded by the real runner in the real sandbox, beside honest students.

Every file in ``tests/hostile/`` replaces one stage file of an otherwise correct submission (the reference
solutions); a file may be written whole, or as the stage's solution with ``EDITS`` (as in tests/mistakes/). One
``grade()`` call grades all the attackers of a group together with honest students placed before, between and
after them, exactly as a class would be graded. For each attacker:

* the attacked stage earns nothing it did not earn (``expect: zero``: no point at all; ``expect-fail: ...``:
  the named checks fail);
* its other stages keep full marks;
and every honest student, wherever it sits in the run, gets full marks. Around the run the tests also check
what must not have happened: a process that survived, a file written outside the sandbox, a network connection.

Small limits keep this fast and the machine safe: 4 s per call, 384 MB of memory per process (the memory
attacks are bounded by these limits), one restart per stage.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import threading
import time
import warnings
from pathlib import Path

import pytest

from autograder.instructor.catalogue import mistake_source
from autograder.runner import Submission, grade
from autograder.sandbox.host import Limits, Sandbox

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "hostile"
LIMITS = Limits(call_timeout=4, stage_timeout=6, memory_mb=384, cpu_s=20, max_restarts=1)
BASIC = ("loop_average", "tril_average")
ATTENTION = ("causal_attention", "multi_head_attention")
MEMORY = ("blockwise_attention", "kv_cache")  # the verdicts read from a graph's sizes and counts

pytestmark = pytest.mark.slow


def _cases(stages) -> list[str]:
    return sorted(
        p.name
        for p in HOSTILE.iterdir()
        if "__" in p.name and p.name.split("__")[0] in stages and (p.suffix == ".py" or p.is_dir())
    )


def control_of(case: str) -> str | None:
    """The honest control named in the hostile file's docstring (``control: <file in tests/hostile/controls>``):
    the same visible work as the attack, without its trick."""
    path = HOSTILE / case
    if path.is_dir():
        return None
    found = re.search(r"^control: (.+)$", path.read_text(), re.M)
    return found.group(1).strip() if found else None


def expectations(path: Path) -> tuple[str, list[str]]:
    """("zero", []) or ("fail", [parts of check names]) from the hostile file's docstring."""
    text = (path / "01_loop_average.py" if path.is_dir() else path).read_text()
    fails = re.findall(r"^expect-fail: (.+)$", text, re.M)
    if fails:
        return "fail", [f.strip() for f in fails]
    assert re.search(r"^expect: zero$", text, re.M), f"{path.name} says nothing about what to expect"
    return "zero", []


class Listener:
    """A TCP port on the judge's loopback that the network attacker tries to reach."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = []
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop:
            try:
                conn, addr = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.connections.append(addr)
            conn.close()

    def close(self):
        self.stop = True
        self.thread.join(2)
        self.sock.close()


def _marked_processes(marker: str, uid: int | None) -> list[str]:
    """Live processes (zombies are dead) whose command line or name carries ``marker``, or that run as ``uid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            comm = Path(f"/proc/{name}/comm").read_text().strip()
            state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            owner = os.stat(f"/proc/{name}").st_uid
        except (OSError, IndexError):
            continue
        if state in (b"Z", b"X"):
            continue
        if marker in cmdline or marker in comm or (uid is not None and owner == uid):
            found.append(f"{name} (uid {owner}, {state.decode()}): {cmdline[:120] or comm}")
    return found


def _tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


class Run:
    """One graded group: the submissions, their results, and what was observed around the run."""

    def __init__(self, course, stages, cases, tmp: Path):
        self.course, self.stages, self.cases = course, stages, cases
        self.marker = "hx" + os.urandom(4).hex()
        self.out = tmp / "watched"
        self.out.mkdir()
        self.listener = Listener()
        self.repo_before = _tree_digest(ROOT / "solutions")
        self.subs: list[Submission] = []
        self.honest: list[str] = []
        self.attackers: dict[str, str] = {}  # student → case
        self.controls: dict[str, str] = {}  # control file → student
        self.tmp = tmp

    def text(self, path: Path, source: str | None = None) -> str:
        """A planted file's text, or ``source``, with the run's placeholders filled in."""
        return (
            (path.read_text() if source is None else source)
            .replace("__REPO__", str(ROOT))
            .replace("__OUT__", str(self.out))
            .replace("__PORT__", str(self.listener.port))
            .replace("__MARKER__", self.marker)
        )

    def solution(self, key: str) -> tuple[str, str]:
        stage = self.course.stage(key)
        return stage.file, (ROOT / "solutions" / stage.file).read_text()

    def add_honest(self) -> None:
        name = f"honest{len(self.honest) + 1}"
        self.honest.append(name)
        self.subs.append(Submission(name, sources={k: self.solution(k) for k in self.stages}))

    def add_attacker(self, case: str) -> None:
        key = case.split("__")[0]
        path = HOSTILE / case
        name = "attacker_" + Path(case).stem  # the whole stem: two stages may share an attack's name
        sources = {k: self.solution(k) for k in self.stages if k != key}
        if path.is_dir():
            # a whole student folder with planted files, read the way the class grader reads folders
            folder = self.tmp / name
            shutil.copytree(path, folder)
            for k in self.stages:
                if k != key:
                    shutil.copy(ROOT / "solutions" / self.course.stage(k).file, folder)
            for f in folder.iterdir():
                f.write_text(self.text(f))
            try:
                from autograder.instructor.collect import collect_student
            except ImportError:
                from autograder.runner import submission_from_folder

                sub = submission_from_folder(self.course, folder, name)
            else:
                sub = collect_student(self.course, folder, name).submission()
            sub.sources = {k: v for k, v in sub.sources.items() if k in self.stages}
            self.planted = folder
        else:
            # a single file: whole, or the stage's solution with its EDITS (autograder.instructor.catalogue)
            sources[key] = (self.course.stage(key).file, self.text(path, mistake_source(path, ROOT)))
            sub = Submission(name, sources=sources)
        self.attackers[name] = case
        self.subs.append(sub)

    def add_control(self, control: str) -> None:
        key = control.split("__")[0]
        name = "control_" + Path(control).stem
        sources = {k: self.solution(k) for k in self.stages if k != key}
        sources[key] = (self.course.stage(key).file, mistake_source(HOSTILE / "controls" / control, ROOT))
        self.controls[control] = name
        self.subs.append(Submission(name, sources=sources))

    def grade(self) -> None:
        self.add_honest()
        for control in sorted({c for c in map(control_of, self.cases) if c}):
            self.add_control(control)
        for i, case in enumerate(self.cases):
            self.add_attacker(case)
            if i % 10 == 9:
                self.add_honest()
        self.add_honest()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sandbox = Sandbox(LIMITS).start()
        if not sandbox.isolation.startswith("bubblewrap"):
            sandbox.close()
            self.listener.close()
            pytest.skip("the hostile suite needs bubblewrap (without it the sandbox does not claim to isolate)")
        self.isolation = sandbox.isolation
        cwd = os.getcwd()
        planted = getattr(self, "planted", None)
        started = time.monotonic()
        try:
            if planted is not None:
                os.chdir(planted)  # the judge itself runs beside the planted conftest.py and pytest.ini
            results = grade(self.course, self.subs, stages=list(self.stages), devices=["cpu"], seed=11, sandbox=sandbox)
        finally:
            os.chdir(cwd)
            self.survivors_during = _marked_processes(self.marker, None)
            uid = self.uid = sandbox.uid
            sandbox.close()
            self.listener.close()
        self.seconds = time.monotonic() - started
        self.survivors_after = _marked_processes(self.marker, uid)
        self.results = {r.student: r for r in results}
        self.repo_after = _tree_digest(ROOT / "solutions")

    def stage(self, student: str, key: str):
        return next(s for s in self.results[student].stages if s.key == key)


@pytest.fixture(scope="module")
def basic_run(course, tmp_path_factory):
    run = Run(course, BASIC, _cases(BASIC), tmp_path_factory.mktemp("hostile_basic"))
    run.grade()
    return run


@pytest.fixture(scope="module")
def attention_run(course, tmp_path_factory):
    from autograder.runner import grader_files

    if len(grader_files(course, list(ATTENTION))) < 4:
        pytest.skip("the graders of stages 7 and 8 are not there yet")
    run = Run(course, ATTENTION, _cases(ATTENTION), tmp_path_factory.mktemp("hostile_attention"))
    run.grade()
    return run


@pytest.fixture(scope="module")
def memory_run(course, tmp_path_factory):
    run = Run(course, MEMORY, _cases(MEMORY), tmp_path_factory.mktemp("hostile_memory"))
    run.grade()
    return run


RUNS = {
    **dict.fromkeys(BASIC, "basic_run"),
    **dict.fromkeys(ATTENTION, "attention_run"),
    **dict.fromkeys(MEMORY, "memory_run"),
}


def _check_attacker(run: Run, case: str) -> None:
    student = next(s for s, c in run.attackers.items() if c == case)
    key = case.split("__")[0]
    kind, parts = expectations(HOSTILE / case)
    attacked = run.stage(student, key)
    earned = {c.name: c.points for c in attacked.checks if c.passed}
    if kind == "zero":
        assert attacked.score == 0, f"{case}: unearned points in {key}: {earned}"
    else:
        for part in parts:
            matching = [c for c in attacked.checks if part in c.name]
            assert matching, f"{case}: no check of {key} is named like {part!r}"
            assert not any(c.passed for c in matching), f"{case}: {part!r} passed ({earned})"
    for other in run.stages:
        if other != key:
            stage = run.stage(student, other)
            failed = [(c.name, c.message[:200]) for c in stage.checks if not c.passed]
            assert stage.score == pytest.approx(stage.max_score), f"{case}: its own {other} lost points: {failed}"


@pytest.mark.parametrize("case", _cases(BASIC))
def test_attacker_earns_nothing_and_keeps_its_other_stages(basic_run, case):
    _check_attacker(basic_run, case)


@pytest.mark.parametrize("case", [c for c in _cases(BASIC) + _cases(ATTENTION) + _cases(MEMORY) if control_of(c)])
def test_attacker_scores_no_more_than_its_honest_control(request, case):
    """Beside each trick, the same visible work done plainly: the trick gains nothing over it, and neither gets
    the "written by hand" or "vectorised" credit."""
    key = case.split("__")[0]
    run = request.getfixturevalue(RUNS[key])
    student = next(s for s, c in run.attackers.items() if c == case)
    attacked, control = run.stage(student, key), run.stage(run.controls[control_of(case)], key)
    assert attacked.score <= control.score, f"{case}: {attacked.score} > its control's {control.score}"
    for stage in (attacked, control) if key not in MEMORY else ():  # (MEMORY: its own checks, by expect-fail)
        credited = [c.name for c in stage.checks if c.passed and ("by hand" in c.name or "tensor operations" in c.name)]
        assert stage.score == 0 or not credited, f"{case}: credited for {credited}"


@pytest.mark.parametrize("case", _cases(MEMORY))
def test_padded_or_partial_work_earns_nothing_it_did_not_do(memory_run, case):
    """Counts and sizes read from a graph: operations nothing uses are not counted, identity operations cannot keep
    a loop's count flat, and blocks of queries alone do not pass for blocks of keys."""
    _check_attacker(memory_run, case)


@pytest.mark.parametrize("case", _cases(ATTENTION))
def test_forbidden_api_attacker_earns_nothing(attention_run, case):
    _check_attacker(attention_run, case)


@pytest.mark.parametrize("which", ["basic_run", "attention_run", "memory_run"])
def test_honest_students_in_the_same_run_get_full_marks(which, request):
    run = request.getfixturevalue(which)
    assert len(run.honest) >= 2
    for student in run.honest:
        for key in run.stages:
            stage = run.stage(student, key)
            failed = [(c.name, c.message[:200]) for c in stage.checks if not c.passed]
            assert stage.score == pytest.approx(stage.max_score), f"{student} lost points in {key}: {failed}"


def test_there_are_enough_cases():
    cases = _cases(BASIC) + _cases(ATTENTION)
    assert len(cases) >= 25
    for case in cases:
        expectations(HOSTILE / case)


def test_no_process_survives_a_child_or_the_run(basic_run):
    assert basic_run.survivors_during == [], "left running after their child ended"
    assert basic_run.survivors_after == [], "left running after the run"


def test_nothing_written_outside_the_sandbox(basic_run):
    time.sleep(0.5)
    assert list(basic_run.out.iterdir()) == []
    assert not (ROOT / "results.json").exists()
    planted = [
        str(p)
        for folder in (ROOT, ROOT / "solutions", ROOT / "autograder", ROOT / ".venv")
        for p in folder.glob("hostile_was_here*")
    ]
    assert planted == []
    assert basic_run.repo_after == basic_run.repo_before  # the reference solutions are untouched


@pytest.mark.skipif(os.geteuid() != 0, reason="a judge that is not root has no other uid to give")
def test_learner_code_ran_under_the_sandbox_uid_not_root(basic_run):
    assert basic_run.uid is not None and basic_run.uid >= 60000
    assert f"own uid {basic_run.uid}, not root" in basic_run.isolation


def test_no_network_connection_reached_the_judge(basic_run):
    assert basic_run.listener.connections == []


def test_the_timed_out_and_killed_stages_fail_with_a_reason(basic_run):
    messages = {
        case: " ".join(c.message for c in basic_run.stage(student, case.split("__")[0]).checks)
        for student, case in basic_run.attackers.items()
    }
    assert "did not finish within" in messages["loop_average__endless_loop.py"]
    # one timeout per stage: the stage's other checks are skipped, not run into the same hang again
    assert "skipped: an earlier check of this stage did not finish in time" in messages["loop_average__endless_loop.py"]
    assert "did not finish within" in messages["loop_average__sleep_at_import.py"]
    # calls that each end before their timeout: the stage's budget for all its calls ends the stage
    assert "took more than 6 s together" in messages["loop_average__slow_calls.py"]
    assert "skipped: an earlier check of this stage did not finish in time" in messages["loop_average__slow_calls.py"]
    assert "segmentation fault" in messages["loop_average__segfault.py"]
    assert "not a valid answer" in messages["loop_average__forge_socket.py"]
    assert "more memory than allowed" in messages["loop_average__fork_memory.py"]
    assert "more memory than allowed" in messages["loop_average__fork_shared_memory.py"]
    assert "more files, folders or links in /tmp than allowed" in messages["loop_average__tmp_flood.py"]


def test_a_stage_one_file_cannot_vouch_for_later_stages(course, tmp_path):
    """A correct stage-1 file that forges the capture of every later call in its child, then a stage 7 that calls
    F.scaled_dot_product_attention: stage 7 scores no more than the same stage 7 after an honest stage 1, and
    gets no "written by hand" credit."""
    from autograder.runner import grader_files

    if len(grader_files(course, ["causal_attention"])) < 2:
        pytest.skip("the graders of stage 7 are not there yet")
    run = Run(course, ("loop_average", "causal_attention"), [], tmp_path)
    stage1, stage7 = course.stage("loop_average"), course.stage("causal_attention")
    poison = (HOSTILE / "cross_stage" / "loop_average_poisons_capture.py").read_text()
    honest1 = (ROOT / "solutions" / stage1.file).read_text()
    sdpa = (HOSTILE / "controls" / "causal_attention__sdpa.py").read_text()
    run.subs = [
        Submission(
            "poisoner",
            sources={"loop_average": (stage1.file, honest1 + "\n" + poison), "causal_attention": (stage7.file, sdpa)},
        ),
        Submission("plain", sources={"loop_average": (stage1.file, honest1), "causal_attention": (stage7.file, sdpa)}),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sandbox = Sandbox(LIMITS).start()
    try:
        results = {
            r.student: r
            for r in grade(
                course, run.subs, stages=["loop_average", "causal_attention"], devices=["cpu"], seed=11, sandbox=sandbox
            )
        }
    finally:
        sandbox.close()
        run.listener.close()
    stages = {name: {s.key: s for s in r.stages} for name, r in results.items()}
    assert stages["poisoner"]["loop_average"].score == pytest.approx(stages["poisoner"]["loop_average"].max_score)
    attacked, control = stages["poisoner"]["causal_attention"], stages["plain"]["causal_attention"]
    assert attacked.score <= control.score
    assert not any(c.passed for c in attacked.checks if "by hand" in c.name)
