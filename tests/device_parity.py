"""Grade the same files on the CPU and on an accelerator, in the sandbox, and report every check whose verdict
differs between the two devices.

    python tests/device_parity.py                  # every accelerator present (cuda, mps), beside the CPU
    python tests/device_parity.py --json out.json  # also write the per-file verdicts

What is graded, each file in its own stage only: the reference solutions, the correct alternatives of
``tests/correct/``, the mistake catalogue of ``tests/mistakes/`` and the attacks of ``tests/hostile/`` (those on
a stage's answers, not on the sandbox, with their honest controls). A check that runs on every device is named
``... [cpu]`` and ``... [cuda]``; the two must agree: both pass, or both fail naming the same mistake. One
difference is expected and only reported: a wrong file that fails on the accelerator alone (a mask kept as a
plain attribute stays on the CPU, which only a second device shows). The solutions and the correct alternatives
must also score full marks. Exit status 1 when either fails, 2 when this machine has no accelerator.

``tests/test_devices.py`` runs this on machines that have an accelerator; CI machines have none, so there it is
skipped and this script is what an instructor (or a developer lent a GPU) runs by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.course import load_course  # noqa: E402
from autograder.instructor.catalogue import mistake_files, mistake_source  # noqa: E402
from autograder.runner import Submission, available_devices, grade  # noqa: E402
from autograder.sandbox.host import Limits, Sandbox  # noqa: E402

SEED = 1234


def files_by_stage(course) -> dict[str, list[tuple[str, str, str]]]:
    """stage key -> [(kind, name, source)]: the solution, the correct alternatives, the catalogue's mistakes."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for stage in course.stages:
        out[stage.key] = [("solution", f"solution__{stage.key}", (ROOT / "solutions" / stage.file).read_text())]
    for path in sorted((ROOT / "tests" / "correct").glob("*__*.py")):
        out[path.name.split("__")[0]].append(("correct", path.stem, mistake_source(path, ROOT)))
    for path in mistake_files(ROOT):
        out[path.name.split("__")[0]].append(("mistake", path.stem, mistake_source(path, ROOT)))
    hostile = ROOT / "tests" / "hostile"
    for path in sorted([*hostile.glob("*__*.py"), *(hostile / "controls").glob("*__*.py")]):
        key = path.name.split("__")[0]
        if key != "loop_average":  # stage 1's attacks are on the sandbox, which tests/test_hostile.py covers
            out[key].append(("hostile", f"{path.parent.name}/{path.stem}", mistake_source(path, ROOT)))
    return out


def split_device(name: str, devices: list[str]) -> tuple[str, str | None]:
    """``"values on every device [cuda]"`` -> ``("values on every device", "cuda")``; a name with no device
    suffix (a bracket of its own, ``row 2 is [0.44, ...]``, is no device) -> ``(name, None)``."""
    for dev in devices:
        if name.endswith(f" [{dev}]"):
            return name[: -len(dev) - 3], dev
    return name, None


def compare(result, accelerator: str) -> tuple[list[str], list[str]]:
    """The checks of one graded stage whose verdicts differ between the CPU and ``accelerator``: (differences
    that are defects, wrong answers caught on the accelerator only)."""
    by_base: dict[str, dict] = {}
    for stage in result.stages:
        for c in stage.checks:
            base, dev = split_device(c.name, ["cpu", accelerator])
            if dev is not None:
                by_base.setdefault(base, {})[dev] = c
    defects, accelerator_only = [], []
    for base, per in sorted(by_base.items()):
        cpu, acc = per.get("cpu"), per.get(accelerator)
        if cpu is None or acc is None:
            defects.append(f"{base}: graded on {sorted(per)} only")
        elif (cpu.passed, cpu.mistake) != (acc.passed, acc.mistake):
            line = (
                f"{base}: cpu {'passed' if cpu.passed else 'failed'} ({cpu.mistake}), "
                f"{accelerator} {'passed' if acc.passed else 'failed'} ({acc.mistake}): "
                f"{(acc.message or cpu.message)[:400]}"
            )
            (accelerator_only if cpu.passed else defects).append(line)
    return defects, accelerator_only


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", help="the accelerator to compare with the CPU (default: every one present)")
    p.add_argument("--stage", action="append", help="only this stage (repeatable)")
    p.add_argument("--kinds", default="solution,correct,mistake,hostile", help="which files (comma-separated)")
    p.add_argument("--json", type=Path, help="write every verdict here")
    args = p.parse_args(argv)
    course = load_course(ROOT / "course.yml")
    accelerators = [args.device] if args.device else [d for d in available_devices() if d != "cpu"]
    if not accelerators:
        print("device_parity: no accelerator on this machine (devices here: cpu); nothing to compare")
        return 2
    kinds = set(args.kinds.split(","))
    problems: list[str] = []
    notes: list[str] = []
    record: dict[str, dict] = {}
    sandbox = Sandbox(Limits(call_timeout=30)).start()
    print(f"sandbox: {sandbox.isolation}", flush=True)
    try:
        for key, files in files_by_stage(course).items():
            if args.stage and key not in args.stage:
                continue
            chosen = [f for f in files if f[0] in kinds]
            subs = [Submission(name, {key: (course.stage(key).file, source)}) for _, name, source in chosen]
            started = time.perf_counter()
            results = grade(course, subs, stages=[key], devices=["cpu", *accelerators], seed=SEED, sandbox=sandbox)
            seconds = time.perf_counter() - started
            bad = 0
            for (kind, name, _), result in zip(chosen, results):
                stage = result.stage(key)
                record[name] = stage.to_json()
                lines, only = [], []
                for acc in accelerators:
                    defects, accelerator_only = compare(result, acc)
                    lines += defects
                    only += accelerator_only
                if kind in ("solution", "correct"):
                    lines += only  # a correct answer may lose nothing anywhere
                    only = []
                    if not stage.full_marks:
                        lines += [f"{c.name}: {c.message[:400]}" for c in stage.checks if not c.passed]
                head = f"{name} ({kind}, {stage.score}/{stage.max_score}):"
                if lines:
                    bad += 1
                    problems += [head] + [f"    {line}" for line in lines]
                if only:
                    notes += [head] + [f"    {line}" for line in only]
            print(f"{key}: {len(subs)} files graded in {seconds:.1f} s, {bad} with a problem", flush=True)
    finally:
        sandbox.close()
    if args.json:
        args.json.write_text(json.dumps(record, indent=1))
    if notes:
        print("caught on the accelerator only (expected for answers that leave a tensor on the CPU):")
        print("\n".join(notes))
    print("\n".join(problems) if problems else f"every verdict agrees between cpu and {', '.join(accelerators)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
