"""``python -m autograder``: the learner's commands (check, hint, watch) and the instructor's.

Each instructor command lives in its own module and registers itself here through ``COMMAND_MODULES``: a
module with ``add_parser(subparsers)`` whose parser sets ``func``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import queue
import signal
import sys
import threading
from pathlib import Path
from typing import Iterator

from .course import CourseError, load_course

# modules that add subcommands (instructor tools); a missing one is skipped
COMMAND_MODULES = (
    "autograder.instructor.grade",
    "autograder.instructor.gradescope",
    "autograder.instructor.nbgrader_build",
    "autograder.instructor.release",
)


def course_from_args(args):
    """The course the command line names: ``--course`` (default: the repository's course.yml) with ``--select``
    replacing its ``select`` when given (``core``, ``all``, a stage key, or several, comma-separated)."""
    select = getattr(args, "select", None)
    return load_course(args.course, select=[s.strip() for s in select.split(",")] if select else None)


def _course(args):
    return course_from_args(args)


def run_check(
    course, folder: Path, *, stages=None, devices=None, seed=None, include_hidden=True, sandbox=None, ready=None
):
    """``seed``: the seed of every checked stage's random inputs, the one a failure prints (random when None);
    ``ready``: called before the first check runs (an :class:`EarlySandbox`'s wait for its worker)."""
    from .runner import grade, submission_from_folder

    sub = submission_from_folder(course, folder, student=folder.name or "you")
    return grade(
        course,
        [sub],
        stages=stages,
        devices=devices,
        fixed_seed=seed,
        include_hidden=include_hidden,
        sandbox=sandbox,
        ready=ready,
    )[0]


class DeviceError(ValueError):
    """``--device`` names no device of this machine: said before anything is graded, never charged to the code."""


def check_device(device: str | None) -> list[str] | None:
    """The devices to grade on: ``[device]``, or None (every device present) when none is named. ``cuda:N``
    names one GPU of several."""
    if not device:
        return None
    from .runner import available_devices

    present = available_devices()
    here = f"devices here: {', '.join(present)}"
    kind, colon, index = device.partition(":")
    if kind not in ("cpu", "cuda", "mps") or (colon and not (kind == "cuda" and index.isdigit())):
        raise DeviceError(f"--device {device}: {device!r} is not a device; {here}")
    if kind not in present:
        raise DeviceError(f"--device {device}: this machine has no {kind} device; {here}")
    if colon:
        import torch

        count = torch.cuda.device_count()
        if int(index) >= count:
            raise DeviceError(f"--device {device}: this machine has {count} CUDA device(s), cuda:0 to cuda:{count - 1}")
    return [device]


class EarlySandbox:
    """A sandbox whose worker starts now, importing torch while this process does (and collects the checks);
    :meth:`ready`, given to :func:`autograder.runner.grade`, waits for it when the first check is about to run."""

    def __init__(self):
        from .sandbox.host import Sandbox

        self.sandbox = Sandbox().launch()
        self.started = False

    def ready(self) -> bool:
        self.sandbox.start()
        self.started = True
        return True

    def close(self) -> None:
        self.sandbox.close(patience=2.0 if self.started else 0)  # one never waited for is still starting: killed


def cmd_check(args) -> int:
    from rich.console import Console

    from . import progress
    from .display import print_check
    from .results import check_json

    course = _course(args)
    folder = Path(args.folder)
    if not folder.is_dir():
        print(f"autograder: {folder} is not a folder", file=sys.stderr)
        return 2
    stages = [course.stage(args.stage).key] if args.stage else None
    early = EarlySandbox()
    try:
        devices = check_device(args.device)
        result = run_check(
            course,
            folder,
            stages=stages,
            devices=devices,
            seed=args.seed,
            include_hidden=not args.public_only,
            sandbox=early.sandbox,
            ready=early.ready,
        )
    finally:
        early.close()
    progress.record(course, result.stages)
    if args.json:
        print(json.dumps(check_json(result), indent=2))
    else:
        print_check(Console(), course, result, progress.hints_shown(course), verbose=args.verbose, folder=args.folder)
    return 0 if all(s.full_marks for s in result.stages) else 1


def cmd_hint(args) -> int:
    """The next hint of a stage: the one that answers its latest failing check when course.yml names one."""
    from . import progress

    course = _course(args)
    stage = course.stage(args.key)
    shown = progress.hints_shown(course).get(stage.key, [])
    latest = progress.latest(course, stage.key)
    failures = progress.answerable(latest) if latest is not None else []
    nxt = progress.next_hint(stage, shown, failures)
    if nxt is None:
        print(f"All {len(stage.hints)} hints for stage {stage.number} ({stage.key}) are shown:")
        for i, h in enumerate(stage.hints, 1):
            print(f"  {i}. {h}")
        return 0
    number, answers = nxt
    progress.mark_shown(course, stage.key, number)
    about = f", for {answers}" if answers is not None else ""
    print(
        f"Hint {number}/{len(stage.hints)} for stage {stage.number} ({stage.key}: {stage.title}){about}:\n"
        f"  {stage.hints[number - 1]}"
    )
    return 0


def changed_stages(course, changes) -> list[str]:
    """The keys of the stages whose files ``changes`` (watchfiles' ``{(change, path)}``) touched, in course order."""
    names = {Path(path).name for _, path in changes}
    return [stage.key for stage in course.stages if stage.file in names]


class WatchFailed(Exception):
    """The file watcher stopped on an error; the message says which."""


def watch_stage_files(folder: Path, files: set[str], stop: threading.Event) -> queue.Queue:
    """Changes to the stage files in ``folder`` (watchfiles' sets of ``(change, path)``), put on the returned
    queue by a thread that starts watching now, before anything reads the files, so that no save is missed;
    then None once the watcher ends, preceded by a :class:`WatchFailed` when it ended because it failed (the
    folder gone, the OS out of watches)."""
    from watchfiles import watch

    changes: queue.Queue = queue.Queue()

    def run() -> None:
        try:
            for batch in watch(
                folder, watch_filter=lambda _change, path: Path(path).name in files, recursive=False, stop_event=stop
            ):
                changes.put(batch)
        except Exception as exc:  # noqa: BLE001 - told to the learner in one line, not as a thread's traceback
            changes.put(WatchFailed(f"{type(exc).__name__}: {exc}"))
        finally:
            changes.put(None)

    threading.Thread(target=run, name="watch", daemon=True).start()
    return changes


def merged_saves(changes: queue.Queue) -> Iterator[set]:
    """The batches of :func:`watch_stage_files`, one per re-check: a batch with every save reported while it
    waited merged into it (the saves made during the last re-check, checked once together). Ends when the watcher
    does, after the saves it reported first; raises the watcher's :class:`WatchFailed` when it failed."""
    item = changes.get()
    while isinstance(item, set):
        ended: list = []  # the watcher's last words (None, or why it failed), when read while merging
        while not ended and not changes.empty():
            more = changes.get()
            if isinstance(more, set):
                item |= more
            else:
                ended.append(more)
        yield item
        item = ended[0] if ended else changes.get()
    if isinstance(item, WatchFailed):
        raise item


def cmd_watch(args) -> int:
    """Check every stage once, then re-check a stage each time its file is saved (watchfiles: the OS says
    when, nothing is polled). The judge and the sandbox's worker stay up in between, so a re-check costs only
    the saved stage's checks."""
    from rich.console import Console

    from . import progress
    from .display import print_check

    course = _course(args)
    folder = Path(args.folder)
    if not folder.is_dir():
        print(f"autograder: {folder} is not a folder", file=sys.stderr)
        return 2
    try:
        import watchfiles  # noqa: F401 - imported where it is used (watch_stage_files); here only to say it is missing
    except ImportError:
        print(
            f"autograder: watch needs watchfiles, which this Python ({sys.executable}) lacks: run `make setup` "
            "(or `pip install watchfiles`)",
            file=sys.stderr,
        )
        return 2
    console = Console()

    def show(result) -> None:
        console.clear()
        print_check(console, course, result, progress.hints_shown(course), folder=args.folder)
        console.print(f"\n[dim]watching {folder}/ — save a file to re-check, Ctrl-C to stop[/dim]")

    interrupted = threading.Event()

    def on_ctrl_c(signum, frame):
        interrupted.set()
        raise KeyboardInterrupt

    def checked(**kwargs):
        """run_check; a Ctrl-C during it (pytest catches it and ends the session early) stops watch too."""
        try:
            result = run_check(course, folder, devices=devices, sandbox=early.sandbox, **kwargs)
        except Exception:
            if interrupted.is_set():
                raise KeyboardInterrupt from None
            raise
        if interrupted.is_set():
            raise KeyboardInterrupt
        return result

    stop = threading.Event()
    changes = watch_stage_files(folder, {stage.file for stage in course.stages}, stop)
    previous = signal.signal(signal.SIGINT, on_ctrl_c)
    early = EarlySandbox()
    failed: WatchFailed | None = None
    try:
        devices = check_device(args.device)
        result = checked(ready=early.ready)
        show(result)
        for batch in merged_saves(changes):
            keys = changed_stages(course, batch)
            if not keys:
                continue
            fresh = {s.key: s for s in checked(stages=keys).stages}
            result.stages = [fresh.get(s.key, s) for s in result.stages]
            show(result)
    except WatchFailed as exc:
        failed = exc
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        early.close()
        signal.signal(signal.SIGINT, previous)
    if failed is not None:
        print(f"autograder: stopped watching {folder}/: {failed}; run `watch` again, or `check`", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autograder", description="Self-attention from scratch: check your progress, get hints, grade a class."
    )
    parser.add_argument("--course", default=None, help="path to course.yml (default: the repository's)")
    parser.add_argument(
        "--select",
        default=None,
        help="the stages to use instead of course.yml's select: a track (core, advanced), all, or "
        "stage keys, comma-separated",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="check a folder of stage files (default exercises/)")
    p.add_argument("folder", nargs="?", default="exercises")
    p.add_argument("--stage", help="check one stage only (its number or key)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every failing check, not only the first")
    p.add_argument("--device", help="run on this device only (cpu, cuda, mps)")
    p.add_argument("--json", action="store_true", help="print the results as JSON on stdout, nothing else")
    p.add_argument("--seed", type=int, help="seed of the random inputs, as printed with a failure (reproduces it)")
    p.add_argument("--public-only", action="store_true", help="run only the public checks")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("hint", help="reveal the next hint of a stage")
    p.add_argument("key", help="stage number or key, e.g. 2 or tril_average")
    p.set_defaults(func=cmd_hint)

    p = sub.add_parser("watch", help="re-check whenever a stage file is saved")
    p.add_argument("folder", nargs="?", default="exercises")
    p.add_argument("--device", help="run on this device only (cpu, cuda, mps)")
    p.set_defaults(func=cmd_watch)

    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and (name + ".").startswith(exc.name + "."):  # the tool, or its package, is not shipped
                continue
            raise
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    # A judge's arrays are tiny: numpy's OpenBLAS thread pool (a thread per core, spinning after each call) only
    # takes CPU from the sandboxed children. Set before numpy is first imported; the judges inherit it.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CourseError as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:
        print(f"autograder: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    except DeviceError as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
