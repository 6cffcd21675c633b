"""Benchmark: grade a generated class of full submissions, and time the naive way on a sample.

    .venv/bin/python bench/grade_class.py                 # 100 submissions, --jobs = number of cores
    .venv/bin/python bench/grade_class.py --n 40 --sample 6 --jobs 2
    .venv/bin/python bench/grade_class.py --select all     # the eleven stages (default: core, stages 1-8)

The class: every student submits every stage file. Honest students copy ``solutions/``; buggy ones replace one
to three stages with a file from ``tests/mistakes/`` (``<stage key>__<mistake>.py``, the catalogue of known
mistakes) or with the untouched exercise stub; the mix is fixed by ``--seed``.

Measured, in the same run and on the same machine, after an untimed grade of two students (torch's libraries
then in the page cache for both measurements, as they are for any run but a machine's first):

* ``grade``: ``python -m autograder grade CLASS --out OUT --jobs J`` as one subprocess, wall clock from start to
  exit (start-up, torch imports, sandboxes and the report included), divided by the class size;
* the naive baseline: one ``python -m autograder check STUDENT --json`` process per submission (a fresh
  interpreter, torch import, sandbox and pytest session each: what "run pytest on every folder" costs), over
  the same graders and seed, for a sample of ``--sample`` students, run ``J`` at a time; the seconds per
  submission are its wall clock divided by the sample size (extrapolated to the class, it is stated so).

``--select`` is course.yml's ``select`` for the run (default ``core``, the eight stages the budget in
bench/RESULTS.md is stated for): the class gets the selected stages' files and is graded with a copy of
course.yml that selects them (``--course``).

The sample's totals must agree between the two (same seed, same student ids): the benchmark fails otherwise.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def course_copy(dest: Path, select: str) -> Path:
    """A course.yml in ``dest`` that selects ``select``, beside links to the repository's solutions/ and
    exercises/ (where the course's loader looks for the stages' files)."""
    import yaml

    dest.mkdir(parents=True, exist_ok=True)
    data = yaml.safe_load((ROOT / "course.yml").read_text())
    data["select"] = select
    (dest / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    for folder in ("solutions", "exercises"):
        (dest / folder).symlink_to(ROOT / folder)
    return dest / "course.yml"


def make_class(dest: Path, n: int, seed: int, course_file: Path) -> dict[str, str]:
    """Write ``n`` student folders into ``dest``; returns student → what they submitted."""
    from autograder.instructor.catalogue import mistake_source
    from autograder.course import load_course

    course = load_course(course_file)
    rnd = random.Random(seed)
    mistakes: dict[str, list[Path]] = {}
    for path in sorted((ROOT / "tests" / "mistakes").glob("*__*.py")):
        mistakes.setdefault(path.name.split("__")[0], []).append(path)
    kinds = {}
    for i in range(n):
        student = f"s{i:03d}"
        folder = dest / student
        folder.mkdir(parents=True)
        for stage in course.stages:
            shutil.copy(ROOT / "solutions" / stage.file, folder / stage.file)
        roll = rnd.random()
        if roll < 0.4:
            kinds[student] = "honest"
            continue
        changed = []
        for stage in rnd.sample(list(course.stages), k=rnd.randint(1, 3)):
            options = mistakes.get(stage.key, [])
            if options and rnd.random() < 0.8:
                pick = rnd.choice(options)
                (folder / stage.file).write_text(mistake_source(pick, ROOT))
                changed.append(f"{stage.key}: {pick.stem.split('__', 1)[1]}")
            else:
                shutil.copy(ROOT / "exercises" / stage.file, folder / stage.file)
                changed.append(f"{stage.key}: stub")
        kinds[student] = "; ".join(changed)
    return kinds


def children_cpu() -> float:
    """CPU seconds of every finished descendant (judges, sandboxes and the children they forked included)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_grade(
    class_dir: Path, out: Path, jobs: int, seed: int, course_file: Path
) -> tuple[float, float, dict[str, str]]:
    cmd = [
        sys.executable,
        "-m",
        "autograder",
        "--course",
        str(course_file),
        "grade",
        str(class_dir),
        "--out",
        str(out),
        "--jobs",
        str(jobs),
        "--seed",
        str(seed),
        "--quiet",
    ]
    t, c = time.perf_counter(), children_cpu()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t, children_cpu() - c
    if proc.returncode != 0:
        sys.exit(f"grade failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    with open(out / "grades.csv", newline="") as fh:
        totals = {row["student"]: row["total"] for row in csv.DictReader(fh)}
    return wall, cpu, totals


def run_baseline(
    class_dir: Path, students: list[str], jobs: int, seed: int, course_file: Path
) -> tuple[float, float, dict[str, str]]:
    def one(student: str) -> tuple[str, str]:
        cmd = [
            sys.executable,
            "-m",
            "autograder",
            "--course",
            str(course_file),
            "check",
            str(class_dir / student),
            "--json",
            "--seed",
            str(seed),
        ]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            sys.exit(f"check failed for {student} ({proc.returncode}):\n{proc.stderr[-3000:]}")
        score = json.loads(proc.stdout)["score"]
        return student, f"{round(score, 2):g}"

    t, c = time.perf_counter(), children_cpu()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        totals = dict(pool.map(one, students))
    return time.perf_counter() - t, children_cpu() - c, totals


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import torch

    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, torch {torch.__version__}, bubblewrap "
        f"{'yes' if shutil.which('bwrap') else 'no'}"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100, help="class size (default 100)")
    ap.add_argument("--sample", type=int, default=10, help="submissions timed with the naive baseline")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--select", default="core", help="the stages graded, as course.yml's select (default: core)")
    ap.add_argument("--keep", type=Path, default=None, help="keep the class and the results in this folder")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)

    work = args.keep or Path(tempfile.mkdtemp(prefix="ag-bench-"))
    class_dir, out = work / "class", work / "out"
    shutil.rmtree(class_dir, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(work / "course", ignore_errors=True)
    course_file = course_copy(work / "course", args.select)
    kinds = make_class(class_dir, args.n, args.seed, course_file)
    honest = sum(k == "honest" for k in kinds.values())
    print(
        f"class: {args.n} full submissions ({honest} honest, {args.n - honest} with 1-3 buggy or unfinished "
        f"stages) in {class_dir}"
    )
    from autograder.course import load_course
    from autograder.runner import grader_files

    course = load_course(course_file)
    graded_stages = [s.key for s in course.stages if grader_files(course, [s.key])]
    print(f"stages with graders: {len(graded_stages)}/{len(course.stages)} ({', '.join(graded_stages)})")

    # untimed: two students graded once, so that torch's libraries are in the page cache for both timed runs
    # (the baseline ran second and found them there; this VM's reclaim had evicted them between runs, and the
    # grade then waited on the disk for about a second at start)
    warm = work / "warm"
    shutil.rmtree(warm, ignore_errors=True)
    for student in sorted(kinds)[:2]:
        shutil.copytree(class_dir / student, warm / "class" / student)
    run_grade(warm / "class", warm / "out", args.jobs, args.seed, course_file)
    shutil.rmtree(warm, ignore_errors=True)

    load_before = os.getloadavg()[0]
    wall, cpu, totals = run_grade(class_dir, out, args.jobs, args.seed, course_file)
    per = wall / args.n
    print(
        f"grade:    {wall:7.2f} s for {args.n} submissions = {per:.3f} s per submission "
        f"(--jobs {args.jobs}, start-up included); CPU {cpu / args.n:.3f} s per submission"
    )

    rnd = random.Random(args.seed + 1)
    sample = sorted(rnd.sample(sorted(kinds), k=min(args.sample, args.n)))
    b_wall, b_cpu, b_totals = run_baseline(class_dir, sample, args.jobs, args.seed, course_file)
    b_per = b_wall / len(sample)
    print(
        f"baseline: {b_wall:7.2f} s for a sample of {len(sample)} = {b_per:.3f} s per submission "
        f"(one `autograder check --json` process each, {args.jobs} at a time; x{args.n} extrapolated: "
        f"{b_per * args.n:.0f} s); CPU {b_cpu / len(sample):.3f} s per submission"
    )
    load_after = os.getloadavg()[0]
    print(f"ratio:    {b_per / per:.1f}x faster (wall clock), {b_cpu / len(sample) / (cpu / args.n):.1f}x less CPU")
    print(
        f"load:     1-minute load average {load_before:.1f} before, {load_after:.1f} after "
        f"({os.cpu_count()} cores; above that, other processes shared the CPUs)"
    )
    mismatched = {
        s: (totals.get(s), b_totals[s])
        for s in sample
        if totals.get(s) is None or abs(float(totals[s]) - float(b_totals[s])) > 0.011
    }
    if mismatched:
        print(f"MISMATCH between grade and check totals: {mismatched}")
    figures = {
        "n": args.n,
        "jobs": args.jobs,
        "grade_wall_s": round(wall, 3),
        "grade_s_per_submission": round(per, 4),
        "baseline_sample": len(sample),
        "baseline_wall_s": round(b_wall, 3),
        "baseline_s_per_submission": round(b_per, 4),
        "ratio": round(b_per / per, 2),
        "grade_cpu_s_per_submission": round(cpu / args.n, 4),
        "baseline_cpu_s_per_submission": round(b_cpu / len(sample), 4),
        "load_average": [round(load_before, 2), round(load_after, 2)],
        "select": args.select,
        "stages_graded": graded_stages,
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "mismatches": mismatched,
    }
    print(f"machine:  {figures['machine']}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
