"""``python -m autograder grade CLASS_DIR --out OUT_DIR``: grade a whole class, sandboxed, in parallel, resumable.

How a run goes:

1. The main process (which never imports torch) reads the class with :mod:`autograder.collect` (only the
   expected files), loads or creates ``OUT_DIR/run.json`` (the base seed), and skips every student whose
   stored result has the same run fingerprint (see :mod:`autograder.store`).
2. The others are graded by ``--jobs`` judge processes (default: one per core), all started the same way
   (``multiprocessing`` ``spawn``, :func:`judge_main`). Each judge starts its own sandbox (its own slot, hence
   its own uid for learner code when the judge is root: a warm zygote that forks a fresh child for every stage
   of every submission), imports torch, and runs ONE pytest session (:func:`autograder.runner.grade`) over the
   submissions it claims, one at a time, from a counter the judges share: a judge that is free takes the next
   one. As each submission's last check ends, the judge writes that student's files atomically and tells the
   main process through a queue, which moves the progress bar. A judge that dies (killed, crashed) costs only
   the submission it was grading: the main process sees it end, and once every judge has ended, grades the
   submissions without a current result again, with new judges started the same way.
3. At the end, ``grades.csv``, ``report.html`` and each ``feedback.html`` are rebuilt from the per-student files,
   so a run that was killed (even with ``kill -9``) and started again ends with the same files as one that never
   stopped. The judges die with the main process (``PR_SET_PDEATHSIG``); each sandbox ends when its judge does
   (its control socket closes, and bubblewrap's ``--die-with-parent``). Ctrl-C reaches the judges too (same
   process group); the main process waits for them a few seconds, then kills them.
"""

from __future__ import annotations

import os
import queue as queue_mod
import re
import sys
import time
import traceback
from pathlib import Path

from . import store
from .collect import Collected, collect_class
from .course import Course, load_course
from .report import Graded, gradescope_json, grades_csv, plural, render_feedback, render_report, summary_table

REPORT_FILE = "report.html"
GRADES_FILE = "grades.csv"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "grade", help="grade a class: one folder per student; sandboxed, parallel, resumable",
        description="Grade every student folder in CLASS_DIR (stage files, one notebook, or nbgrader's "
                    "submitted/<student>/<assignment>/). Writes OUT_DIR/grades.csv, OUT_DIR/<student>/results.json "
                    "(Gradescope format), OUT_DIR/report.html. Running it again grades only what changed.")
    p.add_argument("class_dir", metavar="CLASS_DIR")
    p.add_argument("--out", required=True, metavar="OUT_DIR", help="where results go (created if needed)")
    p.add_argument("--jobs", type=int, default=None, help="parallel judge processes (default: number of cores)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="wall-clock limit of one call into a student's code (default 10)")
    p.add_argument("--seed", type=int, default=None,
                   help="base seed of the hidden inputs (default: chosen on the first run, stored in OUT_DIR)")
    p.add_argument("--device", default=None, help="grade on this device only (cpu, cuda, mps)")
    p.add_argument("--public-only", action="store_true", help="run only the public checks")
    p.add_argument("--stage", action="append", default=None, metavar="KEY",
                   help="grade only this stage (repeat for several; default: every stage)")
    p.add_argument("--assignment", default=None, help="nbgrader layout: the assignment folder to grade")
    p.add_argument("--force", action="store_true", help="grade every student again, even if unchanged")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary table")
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


class GradeRun:
    """One invocation of ``grade``: what is to do, the judges, the files at the end."""

    def __init__(self, course: Course, class_dir: Path, out_dir: Path, *, jobs: int | None = None,
                 timeout: float | None = None, seed: int | None = None, device: str | None = None,
                 public_only: bool = False, assignment: str | None = None, force: bool = False,
                 quiet: bool = False, stages: list[str] | None = None, console=None):
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
        self.err = console or Console(stderr=True)
        self.seed_arg = seed
        self.warnings: list[str] = []
        self.failures: dict[str, str] = {}
        self.graded_now: list[str] = []
        self.isolation = ""

    # -- planning ---------------------------------------------------------------------------------------
    def plan(self) -> tuple[list[Collected], list[Collected], dict[str, str]]:
        listing = collect_class(self.course, self.class_dir, exclude=[self.out_dir], assignment=self.assignment)
        self.listing = listing
        self.seed = store.prepare(self.out_dir, self.seed_arg, self.course.id)
        graders = store.graders_hash(self.course.path)
        options = {"devices": _device_hint(self.device), "timeout": self.timeout,
                   "include_hidden": self.include_hidden, "stages": self.stages}
        fps, todo = {}, []
        for sub in listing.submissions:
            fps[sub.student] = store.run_fingerprint(sub.content_hash(), graders, self.seed, options)
            if self.force or not store.is_current(self.out_dir, sub.student, fps[sub.student]):
                todo.append(sub)
        return listing.submissions, todo, fps

    # -- running the judges -----------------------------------------------------------------------------
    def grade(self, todo: list[Collected], fps: dict[str, str], progress=None, task=None) -> None:
        """Grade ``todo`` with ``--jobs`` judge processes (:func:`judge_main`), each started the same way. Every
        judge gets the whole list and a shared counter: each claims the next submission when it is free (see
        :func:`claimer`), so the judges end together however the submissions differ in cost (a hang takes its
        whole timeout). A judge that dies costs only the submission it was grading (graded again by :meth:`run`)."""
        import multiprocessing as mp
        import shutil

        n_jobs = max(1, min(self.jobs or default_jobs(), len(todo)))
        ctx = mp.get_context("spawn")
        q, counter, base_slot = ctx.Queue(), ctx.Value("i", 0), _base_slot()
        shared = {"course": str(self.course.path), "out": str(self.out_dir), "subs": [s.to_json() for s in todo],
                  "fingerprints": {s.student: fps[s.student] for s in todo}, "seed": self.seed,
                  "device": self.device, "timeout": self.timeout, "include_hidden": self.include_hidden,
                  "stages": self.stages}
        procs = []
        for i in range(n_jobs):
            proc = ctx.Process(target=judge_main, args=({"job": i, "slot": base_slot + i, **shared}, q, os.getpid(),
                                                        counter), name=f"autograder-judge-{i}", daemon=True)
            proc.start()
            procs.append(proc)
        pending = {s.student for s in todo}
        finished: set[int] = set()
        stopped: list[str] = []  # why judges ended early
        folders: dict[int, str] = {}  # each judge's sandbox folder, removed here if the judge dies
        try:
            while len(finished) < len(procs):
                try:
                    self._handle(q.get(timeout=0.5), pending, finished, stopped, folders, progress, task)
                except queue_mod.Empty:
                    pass
                for i, proc in enumerate(procs):
                    if i not in finished and not proc.is_alive():
                        self._drain(q, pending, finished, stopped, folders, progress, task)
                        if i not in finished:  # died without a word (killed): its last claim is graded again
                            self._handle(("error", i, None, f"the judge process stopped (exit code {proc.exitcode})"),
                                         pending, finished, stopped, folders, progress, task)
                            finished.add(i)
                            if i in folders:
                                shutil.rmtree(folders[i], ignore_errors=True)
        finally:
            for proc in procs:
                proc.join(timeout=5)
                if proc.is_alive():
                    proc.kill()
                    proc.join()
        for student in pending:  # claimed by a judge that died, or left when every judge had stopped
            self.failures.setdefault(student, stopped[-1] if stopped else "not graded: its judge ended first")

    def _drain(self, q, *state) -> None:
        while True:
            try:
                msg = q.get_nowait()
            except queue_mod.Empty:
                return
            self._handle(msg, *state)

    def _handle(self, msg, pending, finished, stopped, folders, progress, task) -> None:
        kind, job = msg[0], msg[1]
        if kind == "done":
            student = msg[2]
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
            if msg[4]:
                folders[job] = msg[4]
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
            g = Graded(result=result, notes=list(record.get("notes") or []), layout=record.get("layout", ""),
                       stored=record["result"])
            graded.append(g)
            folder = store.student_dir(self.out_dir, sub.student)
            if not (folder / store.GRADESCOPE_FILE).is_file():
                store.write_json(folder / store.GRADESCOPE_FILE, gradescope_json(result, notes=g.notes))
            store.atomic_write(folder / store.FEEDBACK_FILE, render_feedback(self.course, g))
        if not self.isolation and graded:
            self.isolation = graded[0].result.isolation
        store.atomic_write(self.out_dir / GRADES_FILE, grades_csv(self.course, graded))
        meta = {"seed": self.seed, "isolation": self.isolation,
                "devices": self.device or "every device available"}
        store.atomic_write(self.out_dir / REPORT_FILE, render_report(self.course, graded, meta=meta))
        return graded

    def run(self) -> int:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
            TimeRemainingColumn

        started = time.monotonic()
        subs, todo, fps = self.plan()
        for name, why in self.listing.skipped:
            self.err.print(f"[yellow]skipped[/yellow] {_rich_escape(repr(name) if not name.isprintable() else name)}"
                           f": {why}")
        n_skip = len(subs) - len(todo)
        if not subs:
            self.err.print(f"[yellow]no student folders found in {_rich_escape(str(self.class_dir))}[/yellow]")
        if not self.quiet:
            self.err.print(f"{plural(len(subs), 'submission')} in {_rich_escape(str(self.class_dir))}"
                           f" ({self.listing.layout} layout), seed {self.seed}: "
                           f"{len(todo)} to grade, {n_skip} unchanged since the last run")
        if todo:
            columns = [TextColumn("{task.description}", style="bold"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn()]
            with Progress(*columns, console=self.err, disable=self.quiet, transient=False) as progress:
                task = progress.add_task("starting judges", total=len(todo))
                self.grade(todo, fps, progress, task)
                # one more round for submissions whose judge was lost (not for the ones it graded)
                retry = [s for s in todo if not store.is_current(self.out_dir, s.student, fps[s.student])]
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
            self.err.print(f"graded {plural(len(self.graded_now), 'submission')} in {elapsed:.1f} s"
                           + (f" ({elapsed / len(self.graded_now):.3f} s each)" if self.graded_now else "")
                           + (f"; {n_skip} unchanged (kept)" if n_skip else ""))
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
    course = load_course(args.course)
    class_dir = Path(args.class_dir)
    if not class_dir.is_dir():
        print(f"autograder: {class_dir} is not a folder", file=sys.stderr)
        return 2
    if args.jobs is not None and args.jobs < 1:
        print("autograder: --jobs must be at least 1", file=sys.stderr)
        return 2
    if args.timeout is not None and not args.timeout > 0:
        print("autograder: --timeout must be a positive number of seconds", file=sys.stderr)
        return 2
    run = GradeRun(course, class_dir, Path(args.out), jobs=args.jobs, timeout=args.timeout, seed=args.seed,
                   device=args.device, public_only=args.public_only, assignment=args.assignment, force=args.force,
                   quiet=args.quiet, stages=args.stage)
    try:
        return run.run()
    except KeyboardInterrupt:
        print("\ninterrupted: every submission graded so far is saved; run the same command again to go on",
              file=sys.stderr)
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


def _limits(spec: dict):
    from .sandbox import Limits

    return Limits(call_timeout=spec["timeout"]) if spec.get("timeout") else Limits()


def _base_slot() -> int:
    """The first sandbox slot of this run (its uid under bubblewrap as root): runs side by side differ."""
    return (os.getpid() * 7) % 3000


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


def judge_main(spec: dict, q, parent_pid: int, counter) -> None:
    """One judge: its own sandbox, then one pytest session over the submissions it claims from ``counter``
    (shared with the other judges), each student's files written as soon as they are graded. Everything it has
    to say goes to the main process through ``q``: ``sandbox`` (the isolation, its warnings, its folder),
    ``done`` per student, ``error``, and ``finished`` last."""
    _die_with_parent(parent_pid)
    job = spec["job"]
    sandbox = None
    try:
        import warnings

        from .sandbox import Sandbox

        # the sandbox first: this process has not imported torch yet, and the worker imports its own
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sandbox = Sandbox(_limits(spec), slot=spec["slot"]).start()
        q.put(("sandbox", job, _UID.sub("uid 60000+slot", sandbox.isolation), [str(w.message) for w in caught],
               sandbox.tmp))
        import torch

        torch.set_num_threads(1)  # the judge's work is tiny tensors: a thread pool only fights the sandbox for cores
        from .runner import grade

        course = load_course(spec["course"])
        out_dir = Path(spec["out"])
        subs = [Collected.from_json(d) for d in spec["subs"]]
        by_student = {s.student: s for s in subs}

        def on_done(result) -> None:
            sub = by_student.get(result.student)
            try:
                result.isolation = _UID.sub("uid 60000+slot", result.isolation)  # the same whichever judge graded
                notes = list(sub.notes) if sub else []
                store.save_student(out_dir, result, fingerprint=spec["fingerprints"][result.student], notes=notes,
                                   layout=sub.layout if sub else "", gradescope=gradescope_json(result, notes=notes))
            except Exception:  # noqa: BLE001 - a disk error costs this student, not the run
                q.put(("error", job, result.student, "could not write results: " + traceback.format_exc()[-800:]))
                return
            q.put(("done", job, result.student, result.score, result.max_score))

        grade(course, [s.submission() for s in subs], devices=[spec["device"]] if spec.get("device") else None,
              seed=spec["seed"], include_hidden=spec["include_hidden"], stages=spec.get("stages"), sandbox=sandbox,
              on_done=on_done, claim=claimer(counter, len(subs)))
    except BaseException:  # noqa: BLE001 - report, then end this judge
        what = "the judge could not start: " if sandbox is None else ""
        q.put(("error", job, None, what + traceback.format_exc()[-1500:]))
    finally:
        try:
            if sandbox is not None:
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
