"""Benchmark: how long a learner waits, against ``import torch`` measured in the same run.

    .venv/bin/python bench/learner_latency.py                      # 5 rounds, stage self_attention
    .venv/bin/python bench/learner_latency.py --rounds 8 --stage multi_head_attention --watch-saves 8
    .venv/bin/python bench/learner_latency.py --code /path/to/other/checkout   # the same, with other code

Measured, each as a fresh subprocess from a temporary folder (wall clock, start to exit), the two alternated
round by round so that the machine's load falls on both alike:

* ``python -c "import torch"``: the floor every learner command pays;
* ``python -m autograder check SOLUTIONS --stage STAGE --json``: one stage, every device present.

Then ``python -m autograder watch`` on a copy of ``solutions/``: after its first full check, the stage's file is
saved (a comment appended), and the time from the save to the end of the re-check's output (the "watching ..."
line that closes it) is the watch latency. Alternated with it: every stage file saved at once, which re-checks
every stage (what each save cost before watch re-checked only the saved stage).

``--code`` runs another checkout's ``autograder`` (put first on PYTHONPATH); ``--against OTHER`` times a second
checkout's ``check`` and ``watch`` in the same run (its ``check`` alternated with this one's, round by round), to
weigh a change on the same machine under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def env_for(code: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code), PYTHONUNBUFFERED="1")
    env.pop("AUTOGRADER_DEBUG", None)
    return env


def timed(cmd: list[str], env: dict, cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return elapsed


def watch_latency(code: Path, stage_file: str, saves: int, work: Path) -> tuple[list[float], list[float]]:
    """Seconds from a save to the end of the re-check's output: (``stage_file`` saved, every stage file saved),
    alternated, ``saves`` times each."""
    folder = work / "watched"
    shutil.copytree(ROOT / "solutions", folder)
    proc = subprocess.Popen(
        [sys.executable, "-m", "autograder", "watch", str(folder)],
        env=env_for(code),
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("watching "):
                lines.put(time.perf_counter())
        lines.put(None)

    def save(paths: list[Path], i: int) -> float:
        time.sleep(1.0)  # the watcher is idle again
        saved = time.perf_counter()
        for path in paths:
            with open(path, "a") as fh:
                fh.write(f"# save {i}\n")
        shown = lines.get(timeout=120)
        if shown is None:
            raise SystemExit("watch ended during a re-check")
        return shown - saved

    threading.Thread(target=read, daemon=True).start()
    try:
        if lines.get(timeout=300) is None:
            raise SystemExit("watch ended before its first check")
        one, every = [], []
        for i in range(saves):
            one.append(save([folder / stage_file], i))
            every.append(save(sorted(folder.glob("*.py")), i))
        return one, every
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C: watch stops its sandbox and returns
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # a watch that ignores Ctrl-C during a re-check (the code before)
            proc.kill()
            proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--stage", default="self_attention")
    parser.add_argument("--watch-saves", type=int, default=5)
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose autograder runs (default: this one)")
    parser.add_argument("--against", type=Path, help="another checkout, timed in the same run")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()

    sys.path.insert(0, str(args.code))
    from autograder.course import load_course

    course = load_course(ROOT / "course.yml")
    stage = course.stage(args.stage)
    load_before = os.getloadavg()
    codes = [args.code] + ([args.against] if args.against else [])
    torch_s: list[float] = []
    check_s: dict[Path, list[float]] = {code: [] for code in codes}
    watch_s: dict[Path, tuple[list[float], list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="latency-") as tmp:
        work = Path(tmp)
        check = [sys.executable, "-m", "autograder", "check", str(ROOT / "solutions"), "--stage", stage.key, "--json"]
        timed(check, env_for(args.code), work)  # once before timing: the file cache holds torch and the course
        for _ in range(args.rounds):
            torch_s.append(timed([sys.executable, "-c", "import torch"], env_for(args.code), work))
            for code in codes:
                check_s[code].append(timed(check, env_for(code), work))
        for code in codes:
            if args.watch_saves:
                watch_s[code] = watch_latency(code, stage.file, args.watch_saves, work / code.name)
    load_after = os.getloadavg()

    med_torch = statistics.median(torch_s)
    figures: dict = {
        "machine": f"{platform.system()} {platform.release()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "stage": stage.key,
        "load": [round(load_before[0], 2), round(load_after[0], 2)],
        "import_torch_s": [round(t, 3) for t in torch_s],
        "median_import_torch_s": round(med_torch, 3),
        "code": {},
    }
    rows = []
    for code in codes:
        med_check = statistics.median(check_s[code])
        one, every = watch_s.get(code, ([], []))
        figures["code"][str(code)] = {
            "check_s": [round(t, 3) for t in check_s[code]],
            "median_check_s": round(med_check, 3),
            "check_over_torch": round(med_check / med_torch, 2),
            "watch_s": [round(t, 3) for t in one],
            "watch_every_stage_s": [round(t, 3) for t in every],
            "median_watch_s": round(statistics.median(one), 3) if one else None,
            "median_watch_every_stage_s": round(statistics.median(every), 3) if every else None,
        }
        rows.append(
            f"| {time.strftime('%H:%M', time.gmtime())} | {code} | {stage.key} | {med_torch:.2f} | "
            f"{med_check:.2f} | **{med_check / med_torch:.2f}×** | "
            + (
                f"{statistics.median(one):.2f} (max {max(one):.2f}) | {statistics.median(every):.2f}"
                if one
                else "– | –"
            )
            + f" | {load_before[0]:.1f} → {load_after[0]:.1f} |"
        )
    print(json.dumps(figures, indent=2))
    print()
    print("\n".join(rows))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
