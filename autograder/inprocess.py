"""Checking a stage inside a running Jupyter kernel, where the learner's code already lives.

A notebook has no stage file to hand to the sandbox: the learner's functions are names in the kernel's
globals. The functions here wrap that namespace in :class:`autograder.sandbox.proxy.LocalStudent` and run the very
same graders as ``python -m autograder check`` through :func:`autograder.runner.grade`, on every device the kernel
can see. There is no isolation: the code is already running in the kernel (that is the notebook's model; the
sandboxed ``python -m autograder grade`` is the one to trust with a class).

Three entry points, one per kind of cell:

* :func:`check_stage` — the check cell of the self-learner notebooks (``notebooks/``): runs the checks, keeps the
  course's progress in the store ``check`` uses too (:mod:`autograder.progress`) and shows the progress table.
* :func:`nbgrader_public` — the visible test cell of an nbgrader notebook: prints the public checks, raises
  ``AssertionError`` when one fails (so ``nbgrader validate`` reports it).
* :func:`nbgrader_score` — the hidden test cell: runs every check and *returns* the points earned, which nbgrader
  reads from the cell's value as partial credit.

nbgrader scores a test cell 0 as soon as anything appears on its stderr, so the checks run inside
:func:`quiet`: warnings, logging and both ``sys.stderr`` and file descriptor 2 are silenced while they run.

Each call into the learner's code has the sandbox's time limit (``Limits.call_timeout``), enforced with
``SIGALRM`` in the kernel's main thread, where cells run: an endless loop fails its check after that time and
the stage's remaining checks are skipped, as in ``check``. Where there is no ``SIGALRM`` (Windows) or the checks
run outside the main thread, calls have no time limit.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import secrets
import signal
import sys
import tempfile
import threading
import warnings
from pathlib import Path

from .course import Course, load_course
from .results import StageResult, SubmissionResult
from .runtime import wire
from .sandbox.errors import StudentTimeout
from .sandbox.host import Limits
from .sandbox.proxy import LocalStudent, StudentProxy

_COURSE: Course | None = None


def _course(course: Course | None = None) -> Course:
    """The course the kernel checks against: ``$AUTOGRADER_COURSE`` or the installed package's course.yml."""
    global _COURSE
    if course is not None:
        return course
    if _COURSE is None:
        _COURSE = load_course(os.environ.get("AUTOGRADER_COURSE") or None)
    return _COURSE


@contextlib.contextmanager
def quiet():
    """Nothing reaches stderr while the block runs: no warnings, no log records, no writes to ``sys.stderr``
    and none to file descriptor 2 (where C++ code and ipykernel's fd capture write)."""
    try:
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass
    saved_fd = sink = None
    try:
        sink = tempfile.TemporaryFile()
        saved_fd = os.dup(2)
        os.dup2(sink.fileno(), 2)
    except OSError:
        saved_fd = None
    previous_disable = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous_disable)
        if saved_fd is not None:
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
        if sink is not None:
            sink.close()


def _student_id() -> str:
    """The learner's id when nbgrader autogrades (it runs each notebook in autograded/<student>/<assignment>/),
    so each learner gets their own random hidden inputs; otherwise a fixed name."""
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        name = Path.cwd().parent.name
        if name:
            return name
    return "notebook"


class CallTimeout(BaseException):
    """Raised into the learner's code when a call has run out of time (a BaseException, so that an
    ``except Exception`` in that code does not catch it)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Interrupt the block with :class:`CallTimeout` after ``seconds``, and again every half second until it ends
    (code that catches it anyway is interrupted again). Yields a function that says whether time ran out. No
    limit outside the main thread or without ``SIGALRM``."""
    fired = False

    def timed_out() -> bool:
        return fired

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield timed_out
        return

    def on_alarm(signum, frame):
        nonlocal fired
        fired = True
        raise CallTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)
    try:
        yield timed_out
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class KernelStudent(LocalStudent):
    """The learner's functions in the kernel, each call under a time limit; after a timeout the stage's other
    checks are skipped, as the sandbox does."""

    def __init__(self, namespace: dict, filename: str, timeout: float):
        super().__init__(namespace, filename=filename)
        self.timeout = timeout

    def _ensure(self) -> None:
        if self.timed_out is not None:
            StudentProxy._ensure(self)  # raises the sandbox's "skipped: an earlier check ... did not finish"

    def _roundtrip(self, req: wire.Request, blob: bytes) -> tuple[wire.Reply, bytes]:
        try:
            with time_limit(self.timeout) as timed_out:
                reply = super()._roundtrip(req, blob)
            expired = timed_out()
        except CallTimeout:  # it fired after the learner's code returned, before the limit was lifted
            expired = True
        if expired:
            self.timed_out = f"{self.timeout:g} s"
            raise StudentTimeout(
                f"your code did not finish within {self.timeout:g} s (an endless loop, or a "
                "Python loop over a large tensor?): the check stopped it"
            )
        return reply


def run_stage(
    key: str,
    namespace: dict,
    *,
    hidden: bool = True,
    seed: int | None = None,
    course: Course | None = None,
    student: str | None = None,
    fixed_seed: int | None = None,
    timeout: float | None = None,
) -> StageResult | None:
    """Grade one stage against the functions in ``namespace``; ``None`` when the stage has no graders.
    ``seed`` is the run's base seed (as ``grade --seed``), ``fixed_seed`` the stage's own (as ``check --seed``);
    ``timeout``: seconds per call into the learner's code (default: the sandbox's ``Limits.call_timeout``)."""
    from .runner import Submission, grade

    course = _course(course)
    stage = course.stage(key)
    key = stage.key  # a stage number works too
    sub = Submission(student=student or _student_id(), sources={key: (stage.file, "")})
    limit = timeout if timeout is not None else Limits().call_timeout

    def open_student(submission, stage_):
        return KernelStudent(namespace, f"<notebook: {stage.file}>", limit)

    with quiet():
        result = grade(
            course,
            [sub],
            stages=[key],
            seed=seed,
            include_hidden=hidden,
            open_student=open_student,
            fixed_seed=fixed_seed,
        )[0]
    return next((s for s in result.stages if s.key == key), None)


# -- self-learner notebooks ---------------------------------------------------------------------------------
def _mark(passed: bool) -> str:
    return "[green]✓[/green]" if passed else "[red]✗[/red]"


def show_stage(course: Course, result: StageResult, progress: SubmissionResult | None = None) -> None:
    """Display the progress table, this stage's checks and its first failure, as one rich output (HTML in
    Jupyter, text elsewhere)."""
    from rich.console import Console, Group
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    from .display import failure_lines, progress_table

    stage = course.stage(result.key)
    parts: list = []
    if progress is not None:
        parts.append(progress_table(course, progress))
    table = Table(
        title=f"{stage.number}. {escape(stage.title)}: {round(result.score, 2):g}/{result.max_score:g}",
        title_justify="left",
    )
    table.add_column("")
    table.add_column("check")
    table.add_column("points", justify="right")
    for check in result.checks:
        name = escape(check.name) + (" [dim](hidden)[/dim]" if check.hidden else "")
        table.add_row(_mark(check.passed), name, f"{round(check.points, 2):g}/{round(check.max_points, 2):g}")
    parts.append(table)
    failure = result.first_failure
    if result.full_marks:
        parts.append(Text.from_markup(f"[green bold]Stage {stage.number} is done.[/green bold]"))
    elif failure is not None:
        lines = []
        if result.status == "not implemented":
            lines.append(
                "[yellow]Not implemented yet:[/yellow] write the code in the cell above, run it, then run "
                "this cell again."
            )
        lines.append(f"First failing check: [bold]{escape(failure.name)}[/bold]")
        lines.extend(failure_lines(failure))
        if failure.hidden and result.seed is not None:
            lines.append(f"  [dim](random inputs: check_stage(..., seed={result.seed}) draws them again)[/dim]")
        lines.append("[dim]Stuck? Open the hints above this cell, one at a time.[/dim]")
        parts.append(Text.from_markup("\n".join(lines)))
    Console(highlight=False).print(Group(*parts))


def check_stage(
    key: str,
    namespace: dict,
    public: bool = True,
    hidden: bool = False,
    *,
    seed: int | None = None,
    show: bool = True,
    course: Course | None = None,
) -> StageResult:
    """Check one stage against the learner's functions in ``namespace`` (pass ``globals()``).

    ``public`` / ``hidden`` choose which checks are reported (points are shared over every check that ran).
    ``seed``: the seed of the stage's random inputs, the one a failure prints (the same as ``check --seed``).
    Records the result in the course's progress store (:mod:`autograder.progress`, shared with ``check``) and,
    when ``show``, displays the course's progress table and this stage's checks. Returns the
    :class:`StageResult`."""
    from . import progress

    course = _course(course)
    stage = course.stage(key)
    key = stage.key  # a stage number works too
    if seed is None:
        seed = secrets.randbits(31)
    result = run_stage(key, namespace, hidden=hidden, fixed_seed=seed, course=course)
    if result is None:
        result = StageResult(
            key=key, title=stage.title, max_score=stage.points, status="missing", note="no checks for this stage yet"
        )
        if show:
            print(f"Stage {stage.number} ({key}) has no automatic checks yet.")
        return result
    if not public:
        result.checks = [c for c in result.checks if c.hidden]
    if public:
        progress.record(course, [result])
    if show:
        show_stage(
            course, result, progress.progress_result(course, {**progress.load_progress(course), key: result.to_json()})
        )
    return result


# -- nbgrader test cells ------------------------------------------------------------------------------------
def _print_checks(result: StageResult, heading: str) -> None:
    passed = sum(c.passed for c in result.checks)
    print(f"{heading}: {passed}/{len(result.checks)} checks pass")
    for check in result.checks:
        print(f"  {'✓' if check.passed else '✗'} {check.name}")
        if not check.passed and check.message:
            print("      " + check.message.replace("\n", "\n      "))
        if not check.passed and check.mistake and check.mistake not in check.message:
            print(f"      known mistake: {check.mistake}")


class ChecksFailed(AssertionError):
    """Raised by the visible test cell when a public check fails (nbgrader validate reports the cell)."""


def nbgrader_public(key: str, namespace: dict, *, course: Course | None = None) -> None:
    """The visible test cell: run the public checks, print them, raise :class:`ChecksFailed` on a failure."""
    __tracebackhide__ = True  # noqa: F841 - IPython and pytest hide this frame
    course = _course(course)
    result = run_stage(key, namespace, hidden=False, course=course)
    if result is None:
        print(f"{key}: no public checks")
        return
    _print_checks(result, f"{course.stage(key).title} (public checks)")
    failure = result.first_failure
    if failure is not None:
        raise ChecksFailed(f"{failure.name}: {failure.message}" if failure.message else failure.name)


def nbgrader_score(key: str, namespace: dict, *, seed: int | None = None, course: Course | None = None) -> float:
    """The hidden test cell: run every check (public and hidden) and return the points earned.

    nbgrader takes a grade cell's value as its partial credit, so the cell ends with this call. The points are
    those of ``python -m autograder grade``: the stage's points from course.yml shared over the check weights."""
    course = _course(course)
    stage = course.stage(key)
    key = stage.key  # a stage number works too
    result = run_stage(key, namespace, hidden=True, seed=seed, course=course)
    if result is None:
        print(f"{key}: no checks")
        return 0.0
    passed = sum(c.passed for c in result.checks)
    print(f"{stage.title}: {passed}/{len(result.checks)} checks pass (public and hidden)")
    for check in result.checks:
        if not check.passed:
            print(f"  ✗ {check.name}" + (f" (known mistake: {check.mistake})" if check.mistake else ""))
    return float(round(min(max(result.score, 0.0), float(stage.points)), 4))


__all__ = ["check_stage", "nbgrader_public", "nbgrader_score", "quiet", "run_stage"]
