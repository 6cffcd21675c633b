"""A class of graded results made up without grading (for the report's tests and its screenshot): every stage
of course.yml with a few checks, public and hidden, some failed with a message, a named mistake and a heatmap,
as the graders write them. Deterministic for a given size."""

from __future__ import annotations

import random

from autograder.instructor.report import Graded
from autograder.results import CheckResult, StageResult, SubmissionResult

CHECKS = [
    "values",
    "shape and dtype",
    "input unchanged",
    "written by hand",
    "gradients",
    "random inputs",
    "batched inputs",
    "float64 inputs",
]
MISTAKES = [
    "softmax over the wrong dim",
    "upper instead of lower triangle",
    "scaled by sqrt(T)",
    "mask applied after softmax",
    "missing out_proj",
]


def weights(T: int, shift: int = 0) -> list[list[float]]:
    """Causal uniform weights (shift 1: the upper triangle instead)."""
    rows = []
    for i in range(T):
        keep = [j <= i if not shift else j >= i for j in range(T)]
        n = sum(keep)
        rows.append([round(1 / n, 4) if k else 0.0 for k in keep])
    return rows


def make_class(course, n: int, seed: int = 0) -> list[Graded]:
    rng = random.Random(seed)
    out = []
    for s in range(n):
        skill = rng.random()
        stages = []
        for stage in course.stages:
            names = CHECKS[: 4 + stage.index % 5]
            share = stage.points / len(names)
            status, note = "graded", ""
            if rng.random() < 0.04 + 0.03 * stage.index * (1 - skill):
                status = rng.choice(["missing", "not implemented", "error"])
                note = {
                    "missing": f"file missing: {stage.file}",
                    "not implemented": "still the stub",
                    "error": f"{stage.file} does not import: NameError: name 'torhc' is not defined",
                }[status]
            checks = []
            for i, name in enumerate(names):
                hidden = i >= len(names) - 2
                passed = status == "graded" and rng.random() < 0.55 + 0.45 * skill - 0.03 * stage.index
                mistake = message = None
                figures = None
                if not passed:
                    message = note or (
                        f"{stage.key}(x) with x of shape (2, 6, 4): values differ from the "
                        f"reference (9 of 48 values differ; max abs error 0.{rng.randint(1, 99)})"
                    )
                    if status == "graded" and rng.random() < 0.5:
                        mistake = MISTAKES[(stage.index + i) % len(MISTAKES)]
                    if status == "graded" and name == "values":
                        figures = {
                            "heatmaps": [
                                {
                                    "title": f"{stage.key}: attention weights, T = 6",
                                    "expected": weights(6),
                                    "got": weights(6, 1),
                                }
                            ]
                        }
                checks.append(
                    CheckResult(
                        name=name,
                        passed=passed,
                        points=share if passed else 0.0,
                        max_points=share,
                        message=message or "",
                        mistake=mistake,
                        hidden=hidden,
                        figures=figures,
                    )
                )
            stages.append(
                StageResult(
                    key=stage.key,
                    title=stage.title,
                    max_score=stage.points,
                    checks=checks,
                    seed=1000 + s * 17 + stage.index,
                    status=status,
                    note=note,
                )
            )
        out.append(Graded(SubmissionResult(student=f"student{s:04d}", stages=stages, isolation="bubblewrap (own uid)")))
    return out


def main(argv: list[str] | None = None) -> int:
    """``python tests/report_class.py OUT_DIR [--students N]``: OUT_DIR/report.html for a generated class."""
    import argparse
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    from autograder.course import load_course
    from autograder.instructor.report import render_report

    p = argparse.ArgumentParser(description=main.__doc__)
    p.add_argument("out")
    p.add_argument("--students", type=int, default=500)
    args = p.parse_args(argv)
    course = load_course(root / "course.yml")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    page = render_report(
        course,
        make_class(course, args.students),
        meta={"seed": 1, "isolation": "generated results (nothing was graded)", "devices": "cpu"},
    )
    (out / "report.html").write_text(page, encoding="utf-8")
    print(f"{out / 'report.html'}: {args.students} generated students, {len(page.encode()) // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
