"""The runner: pytest runs the grader modules against one or many submissions, in the judge process.

One pytest session grades a whole list of submissions: pytest collects the checks once (one item per check and
device), and the plugin's run loop runs that same list of items for each submission in turn, tearing every
fixture down in between; the ``submission`` fixture is the one being graded. A submission's result is handed to
``on_done`` as soon as its last check has run (the class grader writes it to disk at that moment). Learner code
never runs here: the ``student`` fixture is a proxy to a sandboxed child process (see :mod:`sandbox`).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
from _pytest.runner import runtestprotocol  # pytest's protocol for one item; pyproject pins the tested range

from . import fixtures
from .checks import CheckFailed, CheckInfo
from .course import Course, Stage
from .results import CheckResult, StageResult, SubmissionResult
from .graders.attention import MHA_CALLED, SDPA_CALLED
from .runtime.fused import MESSAGE as FUSED_OFF
from .runtime.fused import MHA_MESSAGE as MHA_OFF
from .sandbox.errors import NotImplementedYet, StudentCrashed, StudentFailure, StudentTimeout, SubmissionLoadError
from .sandbox.host import Limits, Sandbox

GRADERS = Path(__file__).resolve().parent / "graders"


@dataclass
class Submission:
    """One learner's work: stage key → (file name shown in messages, source text)."""

    student: str
    sources: dict[str, tuple[str, str]] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)  # stage key → why there is no source

    def fingerprint(self) -> str:
        h = hashlib.sha256(self.student.encode())
        for key in sorted(self.sources):
            h.update(key.encode() + b"\0" + self.sources[key][1].encode() + b"\0")
        for key in sorted(self.problems):
            h.update(f"!{key}:{self.problems[key]}".encode())
        return h.hexdigest()


def submission_from_folder(course: Course, folder: Path, student: str | None = None) -> Submission:
    """Read exactly the stage files named in course.yml from ``folder``; nothing else is looked at."""
    folder = Path(folder)
    sub = Submission(student=student or folder.name)
    for stage in course.stages:
        path = folder / stage.file
        if path.is_symlink() or not path.is_file():
            sub.problems[stage.key] = f"file missing: {stage.file}"
            continue
        try:
            raw = path.read_bytes()
        except OSError as exc:
            sub.problems[stage.key] = f"cannot read {stage.file}: {exc.strerror}"
            continue
        if len(raw) > 1_000_000:
            sub.problems[stage.key] = f"{stage.file} is larger than 1 MB"
            continue
        sub.sources[stage.key] = (stage.file, raw.decode("utf-8", errors="replace"))
    return sub


def available_devices() -> list[str]:
    import torch

    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        devices.append("mps")
    return devices


def grader_files(course: Course, stages: list[str] | None = None, include_hidden: bool = True) -> list[Path]:
    files = []
    for stage in course.stages:
        if stages and stage.key not in stages:
            continue
        for part in ("public", "hidden") if include_hidden else ("public",):
            path = GRADERS / part / f"test_{stage.key}.py"
            if path.is_file():
                files.append(path)
    return files


def stage_seed(base_seed: int, student: str, stage: str) -> int:
    """The seed of a stage's random inputs, derived from the run's base seed and the student (each student of a
    class gets their own inputs). This is the one seed a learner sees: printed with a failure, recorded in the
    results, and taken back by ``check --seed`` (``grade(fixed_seed=...)``) to draw the same inputs again."""
    digest = hashlib.sha256(f"{base_seed}:{student}:{stage}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


class _Missing:
    """Stands in for the learner's file when there is none: every call fails with the reason."""

    def __init__(self, reason: str):
        self.reason = reason

    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise StageUnavailable(self.reason)

        return fail


class StageUnavailable(StudentFailure):
    pass


def claimed(submissions: list[Submission], claim: Callable[[], int | None] | None):
    """The submissions a session grades, in order: all of them, or, with ``claim`` (shared with other judges),
    each one it claims when it is ready for the next, until ``claim`` returns None. Judges that share a class
    take the next one as they get free, so none idles while another still has a queue, whatever each costs."""
    if claim is None:
        return iter(submissions)
    return (submissions[i] for i in iter(claim, None))


class GraderPlugin:
    """Parametrises the graders over devices, runs them for each submission in turn, and turns pytest reports
    into results."""

    def __init__(
        self,
        course: Course,
        submissions: list[Submission],
        *,
        devices: list[str],
        base_seed: int,
        open_student: Callable[[Submission, Stage], object],
        on_done: Callable | None = None,
        isolation: str = "",
        claim: Callable[[], int | None] | None = None,
        ready: Callable[[], bool] | None = None,
        fixed_seed: int | None = None,
    ):
        self.course = course
        self.fixed_seed = fixed_seed  # every stage's seed, instead of one derived from base_seed
        self.ready = ready  # called once the checks are collected, before the first is run; False: run none
        self.submissions = submissions
        self.claim = claim  # shared with other judges: the index of the next submission to grade, None at the end
        self.devices = devices
        self.base_seed = base_seed
        self.open_student = open_student
        self.on_done = on_done
        self.isolation = isolation
        self.results: dict[str, SubmissionResult] = {}
        self.current: Submission | None = None  # the submission whose checks are running
        self._pending: dict[str, int] = {}  # student -> checks not yet recorded
        self._remaining: dict[tuple[str, str], int] = {}  # (student, stage) -> checks not yet recorded
        self._checks: frozenset = frozenset()  # the node ids of every grader check (item_info's keys)
        self.item_info: dict[str, tuple] = {}  # node id -> (stage key, check name, weight, hidden, device)
        self.collect_errors: list[str] = []
        # (student, stage) -> why the stage earns nothing: a forbidden call, or how it computes could not be verified
        self._forfeits: dict[tuple[str, str], str] = {}
        # (student, stage, constraint) -> (node id, name) of the check that lost points for it (CheckFailed.once:
        # charged once a stage; a check run on several devices is one item per device)
        self._charged: dict[tuple[str, str, str], tuple[str, str]] = {}
        self._open: tuple | None = None  # ((student, stage key), proxy): the one live child, shared by the
        # stage's public and hidden modules (the zygote serves one child at a time)

    def pytest_configure(self, config):
        config.stash[fixtures.GRADER] = self  # how the fixtures find this plugin (through ``request.config``)

    # -- collection ---------------------------------------------------------------------------------------
    def pytest_generate_tests(self, metafunc):
        if "device" in metafunc.fixturenames:
            metafunc.parametrize("device", self.devices, scope="function")

    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors.append(str(report.longrepr)[-2000:])

    def pytest_collection_modifyitems(self, session, config, items):
        stage_of: dict[str, list] = {}
        for item in items:
            stage_key = getattr(item.module, "STAGE", None)
            info: CheckInfo | None = getattr(item.function, "_ag_check", None)
            if stage_key is None or info is None:
                raise pytest.UsageError(f"{item.nodeid}: a grader test needs STAGE and @check(...)")
            callspec = getattr(item, "callspec", None)
            device = callspec.params.get("device") if callspec is not None else None
            n_dev = len(self.devices) if device is not None else 1
            hidden = "hidden" in item.path.parts
            name = info.name + (f" [{device}]" if device is not None and len(self.devices) > 1 else "")
            self.item_info[item.nodeid] = (stage_key, name, info.weight / n_dev, hidden, device)
            stage_of.setdefault(stage_key, []).append(item.nodeid)
        self._checks = frozenset(self.item_info)
        self._per_stage = {key: len(nodeids) for key, nodeids in stage_of.items()}
        self._n_items = len(items)

    def seed_of(self, student: str, stage_key: str) -> int:
        """The seed of this student's stage: ``fixed_seed`` when given, else derived from the base seed."""
        if self.fixed_seed is not None:
            return self.fixed_seed
        return stage_seed(self.base_seed, student, stage_key)

    def _begin(self, sub: Submission) -> None:
        """The empty result of a submission about to be graded (its checks fill it in)."""
        self.results[sub.student] = SubmissionResult(
            student=sub.student,
            isolation=self.isolation,
            fingerprint=sub.fingerprint(),
            stages=[
                StageResult(key=s.key, title=s.title, max_score=s.points, seed=self.seed_of(sub.student, s.key))
                for s in self.course.stages
                if s.key in self._per_stage
            ],
        )
        self._pending[sub.student] = self._n_items
        for key, n in self._per_stage.items():
            self._remaining[(sub.student, key)] = n
        if not self._n_items:
            self._finish(sub.student)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        """Every check, for one submission after the other: the items were collected once, for all of them.
        The last check of a submission is followed by no item, so every fixture (the learner's child process
        too) is torn down before the next submission's first check."""
        if session.testsfailed and not session.config.getoption("continue_on_collection_errors"):
            raise session.Interrupted(f"{session.testsfailed} error(s) during collection")
        items = session.items
        if session.config.getoption("collectonly"):
            return True
        if self.ready is not None and not self.ready():
            return True
        for sub in claimed(self.submissions, self.claim):
            self._begin(sub)
            self.current = sub
            for i, item in enumerate(items):
                nextitem = items[i + 1] if i + 1 < len(items) else None
                item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
                if session.shouldfail:
                    raise session.Failed(session.shouldfail)
                if session.shouldstop:
                    raise session.Interrupted(session.shouldstop)
        self.current = None
        return True

    # -- the learner's child process: one per (submission, stage) -------------------------------------------
    def stage_proxy(self, submission: Submission, stage: Stage):
        """The proxy for this stage of this submission: opened on first use, then reused by the stage's other
        grader modules (public, hidden), so one child imports the file once instead of once per module."""
        key = (submission.student, stage.key)
        if self._open is not None and self._open[0] != key:
            self._close_open()
        if self._open is None:
            self._open = (key, self.open_student(submission, stage))
        return self._open[1]

    def release_proxy(self, submission: Submission, stage: Stage) -> None:
        """A module is done with its proxy: close the child once no check of that stage is left to run."""
        key = (submission.student, stage.key)
        if self._open is None or self._open[0] != key:
            return
        if not self._remaining.get(key):
            self._close_open()
        elif hasattr(self._open[1], "restarts"):
            self._open[1].restarts = 0  # each module gets its own budget of restarts after crashes (not hangs)

    def _close_open(self) -> None:
        if self._open is None:
            return
        _, proxy = self._open
        self._open = None
        close = getattr(proxy, "close", None)
        if close:
            close()

    def pytest_sessionfinish(self, session):
        if self._open is not None:
            self._close_open()

    # -- verdicts -----------------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        """pytest's own protocol (setup, call, teardown, each made into a report by
        :meth:`pytest_runtest_makereport`, which records the verdict) without the logstart/logfinish and
        logreport hooks: nothing listens to them here (the terminal plugin is off; the session's failure count
        is not used), and computing their ``item.location`` (the grader file's path, made relative) was about
        5 % of the judge's time."""
        if item.nodeid not in self._checks:
            return None
        runtestprotocol(item, log=False, nextitem=nextitem)
        return True

    @staticmethod
    def _outcome(call) -> tuple[str, object]:
        """pytest's outcome of a phase and its long representation, from ``call.excinfo`` itself."""
        exc = call.excinfo
        if exc is None:
            return "passed", None
        if isinstance(exc.value, pytest.skip.Exception):
            return "skipped", ("", 0, str(exc.value)[:300])
        return "failed", f"{exc.typename}: {str(exc.value)[:300]}"

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        """The report of a grader check, made here instead of by pytest: the verdict and the learner's message
        come from ``call.excinfo`` itself, so pytest's failure formatting (it re-parses the grader's source for
        every traceback entry: most of the judge's time when many checks fail) is never needed."""
        if item.nodeid not in self._checks:  # ours for the teardown too: pytest's own report would compute
            return None  # the item's location (a stat and path arithmetic) per check
        outcome, longrepr = self._outcome(call)
        report = pytest.TestReport(
            item.nodeid,
            ("", None, item.nodeid),
            {},
            outcome,
            longrepr,
            call.when,
            duration=call.duration,
            start=call.start,
            stop=call.stop,
        )
        if report.when == "call" or (report.when == "setup" and report.failed):
            self._record(item, call, outcome)
        return report

    def _record(self, item, call, outcome: str) -> None:
        assert self.current is not None, "checks run only while a submission is being graded"
        student = self.current.student
        stage_key, name, weight, hidden, device = self.item_info[item.nodeid]
        stage = self.course.stage(stage_key)
        total = self._weights[stage_key]
        points = stage.points * weight / total if total else 0.0
        passed = outcome == "passed"
        earned = passed
        message, mistake, kind, figures, failure = "", None, None, None, None
        if not passed:
            exc = call.excinfo.value if call.excinfo is not None else None
            message, mistake, kind = self._explain(exc, stage)
            once = getattr(exc, "once", None)
            if once:  # a constraint broken (the values right): the stage's first check to find it loses its points
                first, first_name = self._charged.setdefault(
                    (student, stage_key, once), (item.nodeid, f"{name} on {device}" if device else name)
                )
                if first != item.nodeid:
                    earned = True
                    message += f'\n  (the same mistake already cost points in "{first_name}": it is counted once)'
            figures = getattr(exc, "figures", None)
            failure = (
                "timeout" if isinstance(exc, StudentTimeout) else "crash" if isinstance(exc, StudentCrashed) else None
            )
            if getattr(exc, "forfeit", False):  # a forbidden call (a named mistake) outranks an unverified graph
                if mistake or (student, stage_key) not in self._forfeits:
                    why = "uses a forbidden shortcut" if mistake else "could not be verified as written by hand"
                    self._forfeits[(student, stage_key)] = why
            elif (FUSED_OFF in message or MHA_OFF in message) and stage.by_hand:
                # a fused kernel reached in a stage written by hand (switched off in its child: runtime/fused.py;
                # the error reaches the message however a check reports it). Believed as the child says it: it
                # can only take this learner's own points away
                mistake = SDPA_CALLED if FUSED_OFF in message else MHA_CALLED
                self._forfeits[(student, stage_key)] = "uses a forbidden shortcut"
        result = self.results[student].stage(stage_key)
        result.checks.append(
            CheckResult(
                name=name,
                passed=passed,
                points=points if earned else 0.0,
                max_points=points,
                message=message,
                mistake=mistake,
                hidden=hidden,
                device=device,
                figures=figures,
                failure=failure,
            )
        )
        if kind == "missing":
            result.status, result.note = "missing", message
        elif kind == "not implemented" and result.status != "error":
            result.status = "not implemented"
        elif kind == "import" and result.status == "graded":
            result.status, result.note = "error", message
        self._remaining[(student, stage_key)] -= 1
        self._pending[student] -= 1
        if self._pending[student] == 0:
            self._finish(student)

    def _explain(self, exc, stage: Stage) -> tuple[str, str | None, str | None]:
        if isinstance(exc, StageUnavailable):
            return str(exc), None, "missing"
        if isinstance(exc, NotImplementedYet):
            return (f"not implemented yet ({exc}). Hint: {stage.hints[0]}", None, "not implemented")
        if isinstance(exc, CheckFailed):
            return str(exc), exc.mistake, None
        if isinstance(exc, StudentFailure):
            return str(exc), None, "import" if isinstance(exc, SubmissionLoadError) else None
        if isinstance(exc, AssertionError):
            return (str(exc).split("\nassert ")[0] or "a check failed"), None, None
        if exc is None:
            return "failed", None, None
        return f"could not check this: {type(exc).__name__}: {str(exc)[:300]}", None, None

    def _finish(self, student: str) -> None:
        result = self.results[student]
        for stage in result.stages:
            why = self._forfeits.get((student, stage.key))
            if why:  # a forbidden shortcut, or a computation not verified as written by hand: nothing earned
                for c in stage.checks:
                    if c.passed:
                        c.passed = False
                        c.message = f"no credit: this stage {why} (the failing check that found it says where)"
                    c.points = 0.0
        if self.on_done is not None:
            self.on_done(result)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session):
        # total weight per stage, used to turn a check's weight into points
        self._weights = {}
        for stage_key, _, weight, _, _ in self.item_info.values():
            self._weights[stage_key] = self._weights.get(stage_key, 0) + weight


def _pytest_args(files: list[Path], capture: str = "sys") -> list[str]:
    """``capture``: "sys" where learner code runs in this process (notebooks), so its prints stay out of the
    judge's output; "no" where it runs only in sandboxed children, whose output never reaches this process:
    the capture plugin is then not loaded at all (its hooks around each phase of each check are pure overhead).
    The skipping plugin is never loaded: graders use no skip or xfail marks (``pytest.skip()`` itself still
    works: :meth:`GraderPlugin.pytest_runtest_makereport` reports it), and it looked for them in every check.
    Together: about 5 ms less per submission of pytest's own work."""
    return (
        [str(f) for f in files]
        + [
            "-p",
            "no:cacheprovider",
            "-p",
            "no:terminal",
            "-p",
            "no:warnings",
            "-p",
            "no:stepwise",
            "-p",
            "no:logging",
            "-p",
            "no:doctest",
            "-p",
            "no:pastebin",
            "-p",
            "no:junitxml",
            "-p",
            "no:nose",
            "-p",
            "no:skipping",
            # graders use only student/device/rng/seed: the per-test work of these plugins is pure overhead (~10%)
            "-p",
            "no:unraisableexception",
            "-p",
            "no:threadexception",
            "-p",
            "no:faulthandler",
            "-p",
            "no:tmpdir",
            "-p",
            "no:monkeypatch",
            "-p",
            "no:recwarn",
            "-p",
            "no:setuponly",
            "-p",
            "no:setupplan",
            "-p",
            "no:python_path",
            "-p",
            "no:debugging",
            "--noconftest",
            "--import-mode=importlib",
            "-c",
            os.devnull,
            f"--rootdir={GRADERS}",
            "-o",
            "python_files=test_*.py",
            "-o",
            "addopts=",
        ]
        + (["-p", "no:capture"] if capture == "no" else [f"--capture={capture}"])
    )


def grade(
    course: Course,
    submissions: list[Submission],
    *,
    stages: list[str] | None = None,
    devices: list[str] | None = None,
    seed: int | None = None,
    include_hidden: bool = True,
    limits: Limits | None = None,
    on_done: Callable | None = None,
    sandbox: Sandbox | None = None,
    open_student: Callable | None = None,
    claim: Callable[[], int | None] | None = None,
    ready: Callable[[], bool] | None = None,
    fixed_seed: int | None = None,
) -> list[SubmissionResult]:
    """Grade ``submissions`` and return their results in the same order (with ``claim``, a function shared
    with other judges that returns the index of the next submission to grade or None: only those this process
    claimed).

    ``ready()``, when given, is called after the checks are collected and before the first one runs (a judge
    waits there for a sandbox launched beforehand, so that the collection overlaps the worker's start); when it
    returns False, nothing is graded.

    ``open_student(submission, stage)`` may be given to run learner code elsewhere (notebooks run it
    in-process); by default every stage gets a fresh child of a sandboxed worker.

    ``fixed_seed``: the seed of every stage's random inputs (the per-stage seed a failure prints), instead of
    one derived from ``seed``, the student and the stage: it draws that failure's inputs again."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    devices = devices or available_devices()
    base_seed = seed if seed is not None else secrets.randbits(31)
    own_sandbox = None
    in_process = open_student is not None  # learner code may run in this process (notebooks)
    if open_student is None:
        if sandbox is None:
            sandbox = own_sandbox = Sandbox(limits).start()

        def open_student(sub: Submission, stage: Stage):
            filename, source = sub.sources[stage.key]
            return sandbox.open(source, f"/submission/{filename}", by_hand=stage.by_hand)

    isolation = sandbox.isolation if sandbox is not None else "in-process (notebook)"

    def when_ready() -> bool:
        if ready is not None and not ready():
            return False
        if sandbox is not None:
            plugin.isolation = sandbox.isolation  # known for sure once the worker is up
        return True

    plugin = GraderPlugin(
        course,
        submissions,
        devices=devices,
        base_seed=base_seed,
        open_student=open_student,
        on_done=on_done,
        isolation=isolation,
        claim=claim,
        ready=when_ready if ready is not None else None,
        fixed_seed=fixed_seed,
    )
    files = grader_files(course, stages, include_hidden)
    if not files:  # nothing to run (pytest given no file would collect the current folder's tests instead)
        results = [
            SubmissionResult(student=s.student, stages=[], isolation=isolation, fingerprint=s.fingerprint())
            for s in claimed(submissions, claim)
        ]
        for result in results:
            if on_done is not None:
                on_done(result)
        if own_sandbox is not None:
            own_sandbox.close()
        return results
    old = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # the judge's references are tiny float64 tensors: one thread avoids a thread pool's wake-up cost on every op
    # (milliseconds per softmax on a busy 2-core machine)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings():
            if not in_process:
                # without output capture, a warning raised while checking (torch's, say) would reach the
                # terminal; with capture, as before, nobody saw it either
                warnings.simplefilter("ignore")
            code = pytest.main(_pytest_args(files, capture="sys" if in_process else "no"), plugins=[plugin, fixtures])
    finally:
        torch.set_num_threads(threads)
        if old is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = old
        if own_sandbox is not None:
            own_sandbox.close()
    if plugin.collect_errors or code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR):
        raise RuntimeError(
            "the graders could not be collected (a bug in the course, not in your code):\n"
            + "\n".join(plugin.collect_errors)
        )
    return [plugin.results[s.student] for s in submissions if s.student in plugin.results]
