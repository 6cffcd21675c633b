"""Benchmark: how long a learner waits, against ``import torch`` measured in the same run.

    .venv/bin/python bench/learner_latency.py                      # 5 rounds, stage self_attention
    .venv/bin/python bench/learner_latency.py --rounds 8 --stage multi_head_attention --watch-saves 8
    .venv/bin/python bench/learner_latency.py --code /path/to/other/checkout   # the same, with other code

Measured, each as a fresh subprocess from a temporary folder (wall clock, start to exit), the two alternated
round by round so that the machine's load falls on both alike:

* ``python -c "import torch"``: the floor every learner command pays;
* ``python -m autograder check SOLUTIONS --stage STAGE --json``: one stage, every device present.

Then ``python -m autograder watch`` on a copy of ``solutions/``: after its first full check, one stage file is
saved again and again (a comment appended), and the time from each save to the end of the re-check's output
(the "watching ..." line that closes it) is the watch latency.

``--code`` runs another checkout's ``autograder`` (put first on PYTHONPATH), to compare two versions of the code
on the same machine in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import shutil
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


def watch_latency(code: Path, stage_file: str, saves: int, work: Path) -> list[float]:
    """Seconds from each save of ``stage_file`` to the end of the re-check's output."""
    folder = work / "watched"
    shutil.copytree(ROOT / "solutions", folder)
    proc = subprocess.Popen([sys.executable, "-m", "autograder", "watch", str(folder)], env=env_for(code),
                            cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("watching "):
                lines.put(time.perf_counter())
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        if lines.get(timeout=300) is None:
            raise SystemExit("watch ended before its first check")
        times = []
        path = folder / stage_file
        for i in range(saves):
            time.sleep(1.0)  # the watcher is idle again
            saved = time.perf_counter()
            with open(path, "a") as fh:
                fh.write(f"# save {i}\n")
            shown = lines.get(timeout=120)
            if shown is None:
                raise SystemExit("watch ended during a re-check")
            times.append(shown - saved)
        return times
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--stage", default="self_attention")
    parser.add_argument("--watch-saves", type=int, default=5)
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose autograder runs (default: this one)")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()

    sys.path.insert(0, str(args.code))
    from autograder.course import load_course

    course = load_course(ROOT / "course.yml")
    stage = course.stage(args.stage)
    env = env_for(args.code)
    load_before = os.getloadavg()
    torch_s, check_s = [], []
    with tempfile.TemporaryDirectory(prefix="latency-") as tmp:
        work = Path(tmp)
        check = [sys.executable, "-m", "autograder", "check", str(ROOT / "solutions"), "--stage", stage.key, "--json"]
        timed(check, env, work)  # once before timing: the file cache holds torch and the course for both
        for _ in range(args.rounds):
            torch_s.append(timed([sys.executable, "-c", "import torch"], env, work))
            check_s.append(timed(check, env, work))
        watch_s = watch_latency(args.code, stage.file, args.watch_saves, work) if args.watch_saves else []
    load_after = os.getloadavg()

    med_torch, med_check = statistics.median(torch_s), statistics.median(check_s)
    figures = {
        "machine": f"{platform.system()} {platform.release()}, {os.cpu_count()} cores, Python "
                   f"{platform.python_version()}",
        "code": str(args.code), "stage": stage.key,
        "load": [round(load_before[0], 2), round(load_after[0], 2)],
        "import_torch_s": [round(t, 3) for t in torch_s], "check_s": [round(t, 3) for t in check_s],
        "watch_s": [round(t, 3) for t in watch_s],
        "median_import_torch_s": round(med_torch, 3), "median_check_s": round(med_check, 3),
        "check_over_torch": round(med_check / med_torch, 2),
        "median_watch_s": round(statistics.median(watch_s), 3) if watch_s else None,
    }
    print(json.dumps(figures, indent=2))
    print(f"\n| {time.strftime('%H:%M', time.gmtime())} | {stage.key} | {med_torch:.2f} | {med_check:.2f} | "
          f"**{med_check / med_torch:.2f}×** | "
          + (f"{statistics.median(watch_s):.2f} (max {max(watch_s):.2f})" if watch_s else "–")
          + f" | {load_before[0]:.1f} → {load_after[0]:.1f} |")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
