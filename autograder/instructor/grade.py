"""``python -m autograder grade CLASS_DIR --out OUT_DIR``: grade a whole class, sandboxed, in parallel, resumable.

How a run goes:

1. The main process (which never imports torch) reads the class with :mod:`autograder.instructor.collect` (only the
   expected files), loads or creates ``OUT_DIR/run.json`` (the base seed), and skips every student whose
   stored result has the same run fingerprint (see :mod:`autograder.instructor.store`).
2. The others are graded by ``--jobs`` judge processes (default: one per core). On Linux one launcher, forked
   from the main process before step 1 so that it overlaps the reading of the class, starts every judge's
   sandbox (its own slot, hence its own uid for learner code when the judge is root: a warm zygote that forks a
   fresh child for every stage of every submission), imports torch while the sandboxes start, and forks the
   judges, which inherit its imports and
   collect the checks while their sandbox finishes starting. Elsewhere, and in the round that grades again the
   students of a judge that died, each judge is ``spawn``ed, imports torch and starts its sandbox itself. Two
   paths, not one: the shared start is kept for what it buys (bench/RESULTS.md, "One launch path").
   Each judge runs ONE pytest session (:func:`autograder.runner.grade`) over the submissions it claims, one at
   a time, from a counter the judges share: a judge that is free takes the next one. As each submission's last
   check ends, the judge writes that student's files atomically and tells the main process, which moves the
   progress bar.
3. At the end, ``grades.csv``, ``report.html`` and each ``feedback.html`` are rebuilt from the per-student files,
   so a run that was killed (even with ``kill -9``) and started again ends with the same files as one that never
   stopped. The launcher dies with the main process and the judges with the launcher (``PR_SET_PDEATHSIG``);
   each sandbox ends when its judge does (its control socket closes) or when its parent dies.
"""

from __future__ import annotations

import os
import queue as queue_mod
import re
import sys
import time
import traceback
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import cast

from . import store
from .collect import Collected, collect_class
from ..course import Course, load_course
from .report import (
    Graded,
    failure_summary,
    gradescope_json,
    grades_csv,
    plural,
    render_feedback,
    render_report,
    summary_table,
)

REPORT_FILE = "report.html"
GRADES_FILE = "grades.csv"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "grade",
        help="grade a class: one folder per student; sandboxed, parallel, resumable",
        description="Grade every student folder in CLASS_DIR (stage files, one notebook, or nbgrader's "
        "submitted/<student>/<assignment>/). Writes OUT_DIR/grades.csv, OUT_DIR/<student>/results.json "
        "(Gradescope format), OUT_DIR/report.html. Running it again grades only what changed.",
    )
    p.add_argument("class_dir", metavar="CLASS_DIR")
    p.add_argument("--out", required=True, metavar="OUT_DIR", help="where results go (created if needed)")
    p.add_argument("--jobs", type=int, default=None, help="parallel judge processes (default: number of cores)")
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="wall-clock limit of one call into a student's code (default 10; a stage's calls together get three times that)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="base seed of the hidden inputs (default: chosen on the first run, stored in OUT_DIR)",
    )
    p.add_argument("--device", default=None, help="grade on this device only (cpu, cuda, mps)")
    p.add_argument("--public-only", action="store_true", help="run only the public checks")
    p.add_argument(
        "--stage",
        action="append",
        default=None,
        metavar="KEY",
        help="grade only this stage (repeat for several; default: every stage)",
    )
    p.add_argument("--assignment", default=None, help="nbgrader layout: the assignment folder to grade")
    p.add_argument("--force", action="store_true", help="grade every student again, even if unchanged")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary table")
    p.add_argument(
        "--hidden-detail",
        action="store_true",
        help="each feedback.html shows the hidden checks in full (names, inputs, expected values, "
        "seeds); by default they are summarised (how many, their points), as results.json "
        "shows them before the grades are published",
    )
    p.set_defaults(func=cmd_grade)


# ───────────────────────────── the main process ─────────────────────────────


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _device_hint(device: str | None) -> str:
    """What the default device list will be, without importing torch (part of the run fingerprint)."""
    if device:
        return device
    hint = "auto"
    if any(Path("/dev").glob("nvidia[0-9]*")):
        hint += "+cuda"
    if sys.platform == "darwin":
        hint += "+mps"
    return hint


class Eta:
    """The time left, counting pending hangs. A submission usually takes ``typical`` seconds (the median of
    those graded so far); one that has run longer is taken to be stuck in a call that ends at its timeout, so
    its judge is counted busy until ``typical + timeout`` after it started (a progress bar's rate alone says
    "1 second left" while a judge waits out a hang). The judges share the rest of the work."""

    def __init__(self, total: int, jobs: int, timeout: float):
        self.total, self.jobs, self.timeout = total, max(1, jobs), timeout
        self.started: dict[str, float] = {}  # in flight: student → when a judge took it
        self.durations: list[float] = []

    def start(self, student: str, now: float) -> None:
        self.started[student] = now

    def done(self, student: str, now: float) -> None:
        began = self.started.pop(student, None)
        if began is not None:
            self.durations.append(now - began)

    def seconds_left(self, now: float) -> float | None:
        if not self.durations:
            return None
        typical = sorted(self.durations)[len(self.durations) // 2]
        busy = []
        for began in self.started.values():
            elapsed = now - began
            busy.append(typical - elapsed if elapsed <= typical else typical + self.timeout - elapsed)
        busy = [max(0.0, b) for b in busy]
        waiting = max(0, self.total - len(self.durations) - len(self.started))
        return max(max(busy, default=0.0), (sum(busy) + waiting * typical) / self.jobs)


def _eta_text(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    s = int(seconds + 0.999)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class GradeRun:
    """One invocation of ``grade``: what is to do, the judges, the files at the end."""

    def __init__(
        self,
        course: Course,
        class_dir: Path,
        out_dir: Path,
        *,
        jobs: int | None = None,
        timeout: float | None = None,
        seed: int | None = None,
        device: str | None = None,
        public_only: bool = False,
        assignment: str | None = None,
        force: bool = False,
        quiet: bool = False,
        stages: list[str] | None = None,
        hidden_detail: bool = False,
        console=None,
    ):
        from rich.console import Console

        self.course = course
        self.class_dir = Path(class_dir)
        self.out_dir = Path(out_dir)
        self.jobs = jobs
        self.timeout = timeout
        self.device = device
        self.include_hidden = not public_only
        self.stages = [course.stage(k).key for k in stages] if stages else None  # KeyError names the stages
        self.assignment = assignment
        self.force = force
        self.quiet = quiet
        self.hidden_detail = hidden_detail
        self.err = console or Console(stderr=True)
        self.seed_arg = seed
        self.warnings: list[str] = []
        self.failures: dict[str, str] = {}
        self.graded_now: list[str] = []
        self.isolation = ""
        self._early: EarlyLauncher | None = None

    # -- planning ---------------------------------------------------------------------------------------
    def plan(self) -> tuple[list[Collected], list[Collected], dict[str, str]]:
        listing = collect_class(self.course, self.class_dir, exclude=[self.out_dir], assignment=self.assignment)
        self.listing = listing
        self.previous_seed = store.stored_seed(self.out_dir)
        self.seed = store.prepare(self.out_dir, self.seed_arg, self.course.id)
        graders = store.graders_hash(self.course.path)
        options = {
            "devices": _device_hint(self.device),
            "timeout": self.timeout,
            "include_hidden": self.include_hidden,
            "stages": self.stages,
        }
        fps, todo = {}, []
        for sub in listing.submissions:
            fps[sub.student] = store.run_fingerprint(sub.content_hash(), graders, self.seed, options)
            if self.force or not store.is_current(self.out_dir, sub.student, fps[sub.student]):
                todo.append(sub)
        return listing.submissions, todo, fps

    # -- running the judges -----------------------------------------------------------------------------
    def grade(self, todo: list[Collected], fps: dict[str, str], progress=None, task=None) -> None:
        """Grade ``todo`` with ``--jobs`` judges. Every judge gets the whole list and a shared counter: each
        claims the next submission when it is free (see :func:`claimer`), so the judges end together however
        the submissions differ in cost (a hang takes its whole timeout)."""
        import multiprocessing as mp

        early, self._early = self._early, None  # a launcher started before the class was read (first round only)
        n_jobs = max(1, min(self.jobs or default_jobs(), len(todo)))
        ctx = mp.get_context("spawn")
        q = early.q if early is not None else ctx.Queue()
        counter = early.counter if early is not None else ctx.Value("i", 0)
        base_slot = early.base_slot if early is not None else _base_slot()
        shared = {
            "course": str(self.course.path),
            "select": list(self.course.keys),
            "out": str(self.out_dir),
            "subs": [s.to_json() for s in todo],
            "fingerprints": {s.student: fps[s.student] for s in todo},
            "seed": self.seed,
            "device": self.device,
            "timeout": self.timeout,
            "include_hidden": self.include_hidden,
            "stages": self.stages,
        }
        specs = [{"job": i, "slot": base_slot + i, **shared} for i in range(n_jobs)]
        procs: list[BaseProcess]  # the judges' processes (one launcher for all of them, or one each)
        if early is not None:
            early.hand(specs)
            procs = [early.proc] * len(specs)
        else:  # no launcher: elsewhere than Linux, and the retry round (rare: it follows a judge that died)
            procs = []
            for spec in specs:
                judge = ctx.Process(
                    target=job_main,
                    args=(spec, q, os.getpid(), counter),
                    name=f"autograder-judge-{spec['job']}",
                    daemon=True,
                )
                judge.start()
                procs.append(judge)
        pending = {s.student for s in todo}
        finished: set[int] = set()
        stopped: list[str] = []  # why judges ended early
        patience = 5.0
        from ..sandbox.host import Limits

        self.eta = Eta(len(todo), n_jobs, self.timeout or Limits().call_timeout)
        try:
            while len(finished) < len(procs):
                if progress is not None:
                    progress.update(task, eta=_eta_text(self.eta.seconds_left(time.monotonic())))
                try:
                    msg = q.get(timeout=0.5)
                except queue_mod.Empty:
                    for i, proc in enumerate(procs):
                        if i not in finished and not proc.is_alive():
                            self._drain(q, pending, finished, stopped, progress, task)
                            if i not in finished:
                                finished.add(i)
                                stopped.append(
                                    f"its judge process stopped (exit code {proc.exitcode}) before it was graded"
                                )
                    continue
                self._handle(msg, pending, finished, stopped, progress, task)
        except KeyboardInterrupt:
            # the judges ignore Ctrl-C: asked to stop, each closes its sandbox (and its temporary folder) first
            patience = 15.0
            for proc in dict.fromkeys(procs):
                if proc.is_alive():
                    proc.terminate()
            raise
        finally:
            for proc in dict.fromkeys(procs):
                proc.join(timeout=patience)
                if proc.is_alive():
                    proc.kill()
                    proc.join()
        for student in pending:  # claimed by a judge that died, or left when every judge had stopped
            self.failures.setdefault(student, stopped[-1] if stopped else "not graded: its judge ended first")

    def _drain(self, q, pending, finished, stopped, progress, task) -> None:
        while True:
            try:
                msg = q.get_nowait()
            except queue_mod.Empty:
                return
            self._handle(msg, pending, finished, stopped, progress, task)

    def _handle(self, msg, pending, finished, stopped, progress, task) -> None:
        kind, job = msg[0], msg[1]
        if kind == "start":
            self.eta.start(msg[2], time.monotonic())
        elif kind == "done":
            student = msg[2]
            self.eta.done(student, time.monotonic())
            pending.discard(student)
            self.graded_now.append(student)
            self.failures.pop(student, None)
            if progress is not None:
                progress.update(task, advance=1, description=f"graded {_short(student)}")
        elif kind == "sandbox":
            self.isolation = msg[2]
            for w in msg[3]:
                if w not in self.warnings:
                    self.warnings.append(w)
                    self.err.print(f"[bold red]WARNING[/bold red] {_rich_escape(w)}")
        elif kind == "error":
            student, text = msg[2], msg[3]
            if student:
                self.failures[student] = text
            else:
                stopped.append(text)
            self.err.print(f"[red]judge {job}: {_rich_escape(text.splitlines()[-1] if text else 'error')}[/red]")
        elif kind == "finished":
            finished.add(job)

    # -- the files at the end ---------------------------------------------------------------------------
    def rebuild(self, subs: list[Collected], fps: dict[str, str]) -> list[Graded]:
        graded = []
        for sub in subs:
            record = store.load_record(self.out_dir, sub.student)
            if record is None or record.get("run_fingerprint") != fps[sub.student]:
                self.failures.setdefault(sub.student, "not graded")
                continue
            result = store.result_from_record(record)
            g = Graded(
                result=result,
                notes=list(record.get("notes") or []),
                layout=record.get("layout", ""),
                stored=record["result"],
            )
            graded.append(g)
            folder = store.student_dir(self.out_dir, sub.student)
            if not (folder / store.GRADESCOPE_FILE).is_file():
                store.write_json(folder / store.GRADESCOPE_FILE, gradescope_json(result, notes=g.notes))
            store.atomic_write(
                folder / store.FEEDBACK_FILE, render_feedback(self.course, g, hidden_detail=self.hidden_detail)
            )
        if not self.isolation and graded:
            self.isolation = graded[0].result.isolation
        store.atomic_write(self.out_dir / GRADES_FILE, grades_csv(self.course, graded))
        meta = {"seed": self.seed, "isolation": self.isolation, "devices": self.device or "every device available"}
        page = render_report(self.course, graded, meta=meta, feedback_links=True)
        store.atomic_write(self.out_dir / REPORT_FILE, page)
        return graded

    def run(self) -> int:
        started = time.monotonic()
        if _can_share_start():
            # the sandboxes and the judges' torch import start now, while this process reads the class
            self._early = EarlyLauncher(self.jobs or default_jobs(), self.timeout)
        try:
            return self._run(started)
        finally:
            if self._early is not None:  # never given work (nothing to grade, or reading the class failed)
                self._early.cancel()
                self._early = None

    def announce(self, subs: list[Collected], todo: list[Collected]) -> None:
        """What the terminal says before grading: folders that are not students, students with nothing to grade
        (and the folders they hold), files found in a wrapper folder, a seed that differs from the earlier
        run's (everyone is graded again), and how much there is to do."""
        n_skip = len(subs) - len(todo)
        for name, why in self.listing.skipped:
            self.err.print(
                f"[yellow]skipped[/yellow] {_rich_escape(repr(name) if not name.isprintable() else name)}: {why}"
            )
        for sub in subs:
            if not sub.sources and any(n.startswith("no stage file") for n in sub.notes):
                why = next(n for n in sub.notes if n.startswith("no stage file"))
                self.err.print(f"[yellow]nothing to grade[/yellow] for {_short(sub.student, 60)}: {_rich_escape(why)}")
        wrapped = [sub.student for sub in subs if sub.notes and sub.notes[0].startswith("stage files read from")]
        if wrapped and not self.quiet:
            self.err.print(
                f"the files of {plural(len(wrapped), 'student')} were read from a wrapper folder (as a "
                f"downloaded zip unpacks): {_rich_escape(', '.join(wrapped[:5]))}"
                + (" ..." if len(wrapped) > 5 else "")
            )
        if self.previous_seed is not None and self.seed != self.previous_seed and subs:
            self.err.print(
                f"[yellow]seed {self.seed}[/yellow] differs from the seed {self.previous_seed} of the "
                f"earlier run in {_rich_escape(str(self.out_dir))}: every student is graded again "
                "(the hidden inputs change with the seed)"
            )
        if not subs:
            self.err.print(f"[yellow]no student folders found in {_rich_escape(str(self.class_dir))}[/yellow]")
        if not self.quiet:
            self.err.print(
                f"{plural(len(subs), 'submission')} in {_rich_escape(str(self.class_dir))}"
                f" ({self.listing.layout} layout), seed {self.seed}: "
                f"{len(todo)} to grade, {n_skip} unchanged since the last run"
            )

    def _run(self, started: float) -> int:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        subs, todo, fps = self.plan()
        self.announce(subs, todo)
        n_skip = len(subs) - len(todo)
        if todo:
            columns = [
                TextColumn("{task.description}", style="bold"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("eta {task.fields[eta]}", style="progress.remaining"),
            ]
            with Progress(*columns, console=self.err, disable=self.quiet, transient=False) as progress:
                task = progress.add_task("starting judges", total=len(todo), eta=_eta_text(None))
                self.grade(todo, fps, progress, task)
                # one more round for submissions whose judge was lost (not for the ones it graded)
                retry = [s for s in todo if not store.is_current(self.out_dir, s.student, fps[s.student])]
                # a judge killed just after saving a result may not have reported it (a queue's message is sent
                # by a thread of the sender): what is saved and current is graded, whatever was reported
                lost = {s.student for s in retry}
                self.failures = {student: why for student, why in self.failures.items() if student in lost}
                reported = set(self.graded_now)
                self.graded_now += [s.student for s in todo if s.student not in lost and s.student not in reported]
                if retry and len(retry) < len(todo):
                    progress.update(task, description=f"retrying {len(retry)}")
                    self.failures.clear()
                    self.grade(retry, fps, progress, task)
                progress.update(task, description="done")
        graded = self.rebuild(subs, fps)
        elapsed = time.monotonic() - started
        if not self.quiet:
            from rich.console import Console

            Console().print(summary_table(self.course, graded))
            self.err.print(
                f"graded {plural(len(self.graded_now), 'submission')} in {elapsed:.1f} s"
                + (f" ({elapsed / len(self.graded_now):.3f} s each)" if self.graded_now else "")
                + (f"; {n_skip} unchanged (kept)" if n_skip else "")
            )
        failures = failure_summary(graded)
        if failures and not self.quiet:
            self.err.print(f"[yellow]hangs and crashes[/yellow]: {_rich_escape(failures)}")
        for student, why in sorted(self.failures.items()):
            self.err.print(f"[red]not graded[/red] {_rich_escape(student)}: {_rich_escape(why)}")
        if self.failures:
            self.err.print("run the same command again to grade the rest")
        print(f"grades:  {self.out_dir / GRADES_FILE}")
        print(f"report:  {self.out_dir / REPORT_FILE}")
        return 1 if self.failures else 0


def _short(student: str, n: int = 24) -> str:
    s = student if student.isprintable() else repr(student)
    return _rich_escape(s if len(s) <= n else s[: n - 1] + "…")


def _rich_escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def cmd_grade(args) -> int:
    from ..cli import course_from_args

    course = course_from_args(args)
    class_dir = Path(args.class_dir)
    if not class_dir.is_dir():
        print(f"autograder: {class_dir} is not a folder", file=sys.stderr)
        return 2
    if args.jobs is not None and args.jobs < 1:
        print("autograder: --jobs must be at least 1", file=sys.stderr)
        return 2
    out = Path(args.out)
    existing = next((p for p in (out, *out.parents) if os.path.lexists(p)), None)
    if existing is not None and not existing.is_dir():
        what = "--out" if existing == out else f"--out {out}: {existing}"
        print(
            f"autograder: {what} is a file, not a folder: name a folder for the results (created if needed)",
            file=sys.stderr,
        )
        return 2
    if args.timeout is not None and not args.timeout > 0:
        print("autograder: --timeout must be a positive number of seconds", file=sys.stderr)
        return 2
    run = GradeRun(
        course,
        class_dir,
        Path(args.out),
        jobs=args.jobs,
        timeout=args.timeout,
        seed=args.seed,
        device=args.device,
        public_only=args.public_only,
        assignment=args.assignment,
        force=args.force,
        quiet=args.quiet,
        stages=args.stage,
        hidden_detail=args.hidden_detail,
    )
    try:
        return run.run()
    except KeyboardInterrupt:
        print(
            "\ninterrupted: every submission graded so far is saved; run the same command again to go on",
            file=sys.stderr,
        )
        return 130


# ───────────────────────────── a judge process ─────────────────────────────


def _die_with_parent(parent_pid: int) -> None:
    """Linux: the kernel kills this judge when the main process dies, even by kill -9."""
    import signal

    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:  # the parent died before the prctl
        os._exit(1)
    if sys.platform != "linux":  # no PDEATHSIG: a watchdog thread instead
        import threading

        def watch():
            while True:
                time.sleep(1.0)
                if os.getppid() != parent_pid:
                    os._exit(1)

        threading.Thread(target=watch, daemon=True).start()


_UID = re.compile(r"\buid 6[0-4]\d{3}\b")  # a sandbox's own uid (UID_BASE + slot): differs from judge to judge


def _can_share_start() -> bool:
    """Whether the judges can be forked from one process (Linux: a judge watches a sandbox worker that is not
    its own child through a pidfd)."""
    return sys.platform.startswith("linux") and hasattr(os, "pidfd_open")


def _limits(spec: dict):
    from ..sandbox.host import Limits

    return Limits(call_timeout=spec["timeout"]) if spec.get("timeout") else Limits()


def _base_slot() -> int:
    """The first sandbox slot of this run (its uid under bubblewrap as root): runs side by side differ."""
    return (os.getpid() * 7) % 3000


class EarlyLauncher:
    """The Linux launcher (:func:`launcher_main`), forked from the main process before it reads the class: the
    sandboxes start and torch is imported while the class is read and fingerprinted (about 0.2 s, on an
    otherwise idle core). It gets the judges' specs with :meth:`hand`, or is stopped by :meth:`cancel` (its
    sandboxes killed at once) when there is nothing to grade. Forked, not spawned: the main process has no
    thread yet (the progress bar's starts later) and a spawned interpreter costs another 0.15 s of start-up."""

    def __init__(self, n_jobs: int, timeout: float | None):
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        self.q = ctx.Queue()
        self.counter = ctx.Value("i", 0)
        self.base_slot = _base_slot()
        incoming, self._outgoing = ctx.Pipe(duplex=False)
        plan = [{"job": i, "slot": self.base_slot + i, "timeout": timeout} for i in range(n_jobs)]
        self.proc = ctx.Process(
            target=launcher_main, args=(plan, self.q, os.getpid(), self.counter, incoming), name="autograder-judges"
        )
        self.proc.start()
        incoming.close()

    def hand(self, specs: list[dict]) -> None:
        """The judges' specs (at most as many as sandboxes were launched): the launcher forks the judges."""
        self._send(specs)

    def cancel(self) -> None:
        self._send(None)
        self.proc.join(timeout=10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()

    def _send(self, specs) -> None:
        try:
            self._outgoing.send(specs)
            self._outgoing.close()
        except OSError:  # the launcher is gone: its judges are reported missing by the main loop
            pass


def launcher_main(specs: list[dict], q, parent_pid: int, counter, incoming) -> None:
    """Start every judge's sandbox, import torch once, then fork the judges from this process.

    Each judge would otherwise import torch itself (about a CPU second) and only then start its sandbox, whose
    worker imports torch again: the judges' imports and the workers' would follow one another. Here the
    workers start first and import torch while this process does, and the judges inherit this process's
    imports. Each judge takes over its own sandbox (:meth:`autograder.sandbox.host.Sandbox.hand_over`); this process
    waits for the judges, reports any that ended without finishing, and collects the workers at the end.

    ``specs`` gives only each sandbox's slot and time limit; the judges' specs arrive on ``incoming`` (from
    :class:`EarlyLauncher`) once the main process has read the class (fewer: the extra sandboxes are stopped;
    None: nothing to grade, every sandbox is stopped)."""
    _die_with_parent(parent_pid)
    import multiprocessing as mp
    import signal
    from multiprocessing.connection import wait as wait_any

    from ..sandbox.host import Sandbox

    # Ctrl-C reaches the whole process group: the main process alone answers it, by sending SIGTERM here,
    # which is passed on to the judges (each closes its sandbox, removing its temporary folder, and ends)
    judges: list = []
    sandboxes: list = []
    stopping: list[bool] = []

    def on_term(signum, frame) -> None:
        stopping.append(True)
        if not judges:  # no judge yet: this process still owns every sandbox
            for sandbox in sandboxes:
                sandbox.close(patience=0)
            _exit_now(q)
        for proc in judges:
            try:
                os.kill(proc.pid, signal.SIGTERM)
            except OSError:
                pass

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, on_term)
    for spec in specs:
        sandboxes.append(Sandbox(_limits(spec), slot=spec["slot"]).launch())
    import gc

    # torch's import makes hundreds of thousands of objects, and the cyclic collector walks them again and again
    # while it runs (about 0.15 of its 1.4 CPU seconds here); they are then frozen (never walked again: the
    # judges' own collections would otherwise each go through them once more), and the judges get the collector
    # back
    gc.disable()
    try:
        import torch

        torch.set_num_threads(1)
        from .. import oracle, runner  # noqa: F401 - imported once here, inherited by every judge
    except Exception:  # noqa: BLE001 - each judge reports its own failure to import
        pass
    finally:
        gc.freeze()
        gc.enable()
    try:
        specs = incoming.recv() or []
    except (EOFError, OSError):
        specs = []
    incoming.close()
    for sandbox in sandboxes[len(specs) :]:
        sandbox.close(patience=0)
    sandboxes = sandboxes[: len(specs)]
    if not specs:
        _exit_now(q)
    ctx = mp.get_context("fork")
    for i, spec in enumerate(specs):
        proc = ctx.Process(
            target=_forked_judge,
            args=(spec, q, os.getpid(), sandboxes, i, counter),
            name=f"autograder-judge-{spec['job']}",
            daemon=True,
        )
        proc.start()
        judges.append(proc)
    if stopping:  # asked to stop while the judges were being started
        on_term(signal.SIGTERM, None)
    folders = [sandbox.tmp for sandbox in sandboxes]  # the worker's copy: removed by the judge's close()
    for sandbox in sandboxes:
        sandbox.hand_over(keep=False)
    running = dict(zip((proc.sentinel for proc in judges), zip(specs, judges, folders)))
    while running:
        for sentinel in wait_any(list(running)):  # the sentinels passed in (ints)
            spec, proc, folder = running.pop(cast(int, sentinel))
            proc.join()
            if proc.exitcode != 0:  # reported at once: the student it was grading is graded again by the retry round
                q.put(("error", spec["job"], None, f"the judge process stopped (exit code {proc.exitcode})"))
                q.put(("finished", spec["job"]))
                if folder:
                    import shutil

                    shutil.rmtree(folder, ignore_errors=True)
    _reap_children()
    _exit_now(q)


def _reap_children(patience: float = 5.0) -> None:
    """Collect the sandbox workers this process started (each ends when its judge closes it or dies)."""
    from ..runtime.zygote import _reap

    deadline = time.monotonic() + patience
    while not _reap() and time.monotonic() < deadline:
        time.sleep(0.02)


def _forked_judge(spec: dict, q, parent_pid: int, sandboxes: list, mine: int, counter=None) -> None:
    for i, sandbox in enumerate(sandboxes):
        sandbox.hand_over(keep=i == mine)
    job_main(spec, q, parent_pid, counter, sandbox=sandboxes[mine])


def claimer(counter, n: int):
    """The next index below ``n`` from a counter shared by the judges (a ``multiprocessing.Value``), or None
    once every submission is taken."""

    def claim() -> int | None:
        with counter.get_lock():
            i = counter.value
            if i >= n:
                return None
            counter.value = i + 1
            return i

    return claim


def _announcing(claim, subs: list, q, job: int):
    """``claim`` that also tells the main process which submission this judge takes (for the time left)."""

    def take() -> int | None:
        i = claim()
        if i is not None:
            q.put(("start", job, subs[i].student))
        return i

    return take


def job_main(spec: dict, q, parent_pid: int, counter=None, sandbox=None) -> None:
    """One judge: its own sandbox (``sandbox``: one already launched for it), one pytest session over the
    submissions it claims (``counter``, shared with the other judges; without it, every one in ``spec``),
    results written as they finish."""
    _die_with_parent(parent_pid)
    import signal

    # Ctrl-C is the main process's to answer; its SIGTERM ends this judge through the finally below (the
    # sandbox closed, its temporary folder removed)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    job = spec["job"]
    try:
        import warnings

        import torch

        torch.set_num_threads(1)  # the judge's work is tiny tensors: a thread pool only fights the sandbox for cores
        from ..runner import grade
        from ..sandbox.host import Sandbox

        course = load_course(spec["course"], select=spec["select"])
        out_dir = Path(spec["out"])
        subs = [Collected.from_json(d) for d in spec["subs"]]
        by_student = {s.student: s for s in subs}
        # started now, waited for once the checks are collected (see ready below): the two overlap
        sandbox = sandbox or Sandbox(_limits(spec), slot=spec["slot"]).launch()
    except BaseException:  # noqa: BLE001 - report, then end this judge
        q.put(("error", job, None, "the judge could not start: " + traceback.format_exc()[-1500:]))
        q.put(("finished", job))
        return
    start_error: list[str] = []

    def ready() -> bool:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sandbox.start()
        except BaseException:  # noqa: BLE001 - reported below: this judge grades nothing
            start_error.append("the judge could not start: " + traceback.format_exc()[-1500:])
            return False
        q.put(("sandbox", job, _UID.sub("uid 60000+slot", sandbox.isolation), [str(w.message) for w in caught]))
        return True

    def on_done(result) -> None:
        sub = by_student.get(result.student)
        try:
            result.isolation = _UID.sub("uid 60000+slot", result.isolation)  # the same whichever judge graded it
            notes = list(sub.notes) if sub else []
            store.save_student(
                out_dir,
                result,
                fingerprint=spec["fingerprints"][result.student],
                notes=notes,
                layout=sub.layout if sub else "",
                gradescope=gradescope_json(result, notes=notes),
            )
        except Exception:  # noqa: BLE001 - a disk error costs this student, not the run
            q.put(("error", job, result.student, "could not write results: " + traceback.format_exc()[-800:]))
            return
        q.put(("done", job, result.student, result.score, result.max_score))

    try:
        grade(
            course,
            [s.submission() for s in subs],
            devices=[spec["device"]] if spec.get("device") else None,
            seed=spec["seed"],
            include_hidden=spec["include_hidden"],
            stages=spec.get("stages"),
            sandbox=sandbox,
            on_done=on_done,
            claim=_announcing(claimer(counter, len(subs)), subs, q, job) if counter is not None else None,
            ready=ready,
        )
        for text in start_error:
            q.put(("error", job, None, text))
    except BaseException:  # noqa: BLE001
        q.put(("error", job, None, traceback.format_exc()[-1500:]))
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a stop asked for now must not cut the clean-up short
        try:
            sandbox.close()
        finally:
            q.put(("finished", job))
            _exit_now(q)


def _exit_now(q) -> None:
    """End the judge once its last message is flushed, skipping the interpreter's teardown (torch's alone
    takes about half a second, which the main process would spend waiting in ``join``)."""
    try:
        q.close()
        q.join_thread()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(0)
