"""``python -m autograder``: the learner's commands (check, hint, watch) and the instructor's.

Each instructor command lives in its own module and registers itself here through ``COMMAND_MODULES``: a
module with ``add_parser(subparsers)`` whose parser sets ``func``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from pathlib import Path

from .course import CourseError, load_course

# modules that add subcommands (instructor tools); a missing one is skipped
COMMAND_MODULES = ("autograder.instructor.grade", "autograder.instructor.gradescope",
                   "autograder.instructor.nbgrader_build", "autograder.instructor.release")
STATE_DIR = ".autograder"


def _course(args):
    return load_course(args.course)


def _hints_file() -> Path:
    return Path.cwd() / STATE_DIR / "hints.json"


def load_hints_shown() -> dict[str, int]:
    try:
        data = json.loads(_hints_file().read_text())
        return {k: int(v) for k, v in data.items()} if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_hints_shown(shown: dict[str, int]) -> None:
    path = _hints_file()
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(shown, indent=2))


def run_check(course, folder: Path, *, stages=None, devices=None, seed=None, include_hidden=True, sandbox=None):
    from .runner import grade, submission_from_folder

    sub = submission_from_folder(course, folder, student=folder.name or "you")
    return grade(course, [sub], stages=stages, devices=devices, seed=seed, include_hidden=include_hidden,
                 sandbox=sandbox)[0]


def cmd_check(args) -> int:
    from rich.console import Console

    from .display import print_check
    from .results import check_json

    course = _course(args)
    folder = Path(args.folder)
    if not folder.is_dir():
        print(f"autograder: {folder} is not a folder", file=sys.stderr)
        return 2
    stages = [args.stage] if args.stage else None
    if args.stage:
        course.stage(args.stage)
    devices = [args.device] if args.device else None
    result = run_check(course, folder, stages=stages, devices=devices, seed=args.seed,
                       include_hidden=not args.public_only)
    if args.json:
        print(json.dumps(check_json(result), indent=2))
    else:
        print_check(Console(), course, result, load_hints_shown())
    return 0 if all(s.full_marks for s in result.stages) else 1


def cmd_hint(args) -> int:
    course = _course(args)
    stage = course.stage(args.key)
    shown = load_hints_shown()
    n = shown.get(stage.key, 0)
    if n >= len(stage.hints):
        print(f"All {len(stage.hints)} hints for {stage.key} are shown:")
        for i, h in enumerate(stage.hints, 1):
            print(f"  {i}. {h}")
        return 0
    shown[stage.key] = n + 1
    _save_hints_shown(shown)
    print(f"Hint {n + 1}/{len(stage.hints)} for {stage.key} ({stage.title}):\n  {stage.hints[n]}")
    return 0


def cmd_watch(args) -> int:  # pragma: no cover - interactive loop, exercised by hand
    from rich.console import Console

    from .display import print_check
    from .sandbox.host import Sandbox

    course = _course(args)
    folder = Path(args.folder)
    console = Console()
    files = [folder / s.file for s in course.stages]

    def snapshot():
        return tuple(f.stat().st_mtime_ns if f.exists() else 0 for f in files)

    with Sandbox() as sandbox:
        last = None
        while True:
            now = snapshot()
            if now != last:
                last = now
                console.clear()
                result = run_check(course, folder, devices=[args.device] if args.device else None, sandbox=sandbox)
                print_check(console, course, result, load_hints_shown())
                console.print(f"\n[dim]watching {folder}/ — save a file to re-check, Ctrl-C to stop[/dim]")
            try:
                time.sleep(args.interval)
            except KeyboardInterrupt:
                return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autograder", description="Self-attention from scratch: check your "
                                     "progress, get hints, grade a class.")
    parser.add_argument("--course", default=None, help="path to course.yml (default: the repository's)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="check a folder of stage files (default exercises/)")
    p.add_argument("folder", nargs="?", default="exercises")
    p.add_argument("--stage", help="check one stage only (its key)")
    p.add_argument("--device", help="run on this device only (cpu, cuda, mps)")
    p.add_argument("--json", action="store_true", help="print the results as JSON on stdout, nothing else")
    p.add_argument("--seed", type=int, help="seed of the random hidden inputs (to reproduce a failure)")
    p.add_argument("--public-only", action="store_true", help="run only the public checks")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("hint", help="reveal the next hint of a stage")
    p.add_argument("key", help="stage key, e.g. tril_average")
    p.set_defaults(func=cmd_hint)

    p = sub.add_parser("watch", help="re-check whenever a stage file is saved")
    p.add_argument("folder", nargs="?", default="exercises")
    p.add_argument("--device")
    p.add_argument("--interval", type=float, default=1.0)
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


if __name__ == "__main__":
    sys.exit(main())
