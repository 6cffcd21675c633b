"""The class grader's outputs for people: Gradescope's results.json, grades.csv, report.html. Student strings are
hostile (ids are folder names, messages quote their errors): everything is escaped, the page is self-contained."""

from __future__ import annotations

import base64
import csv
import dataclasses
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from html.parser import HTMLParser

from autograder.checks import heatmaps
from autograder.instructor.report import (
    SCRIPT,
    Graded,
    Matrices,
    class_stats,
    gradescope_json,
    grades_csv,
    heatmap_data,
    render_feedback,
    render_report,
)
from autograder.results import CheckResult, StageResult, SubmissionResult
from tests.report_class import make_class

CSS_TEXT = (Path(__file__).resolve().parent.parent / "autograder" / "templates" / "report.css").read_text()

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def result(
    student: str, passed: bool, *, mistake: str | None = None, message: str = "", figures=None, course=None
) -> SubmissionResult:
    stages = []
    for stage in course.stages[:2]:
        checks = [
            CheckResult(
                name="values",
                passed=passed,
                points=stage.points / 2 if passed else 0.0,
                max_points=stage.points / 2,
                message="" if passed else message,
                mistake=mistake,
                figures=None if passed else figures,
            ),
            CheckResult(
                name="random inputs", passed=True, points=stage.points / 2, max_points=stage.points / 2, hidden=True
            ),
        ]
        stages.append(
            StageResult(
                key=stage.key, title=stage.title, max_score=stage.points, checks=checks, seed=1234 + stage.index
            )
        )
    return SubmissionResult(student=student, stages=stages, isolation="bubblewrap (own uid)")


def test_gradescope_json_has_the_documented_fields(course):
    r = result("ann", False, mistake="upper instead of lower triangle", message="values differ", course=course)
    data = gradescope_json(r, notes=["ignored (only the stage files are read): conftest.py"])
    json.dumps(data, allow_nan=False)
    assert data["score"] == r.score == 10
    assert len(data["tests"]) == 4
    first = data["tests"][0]
    assert first["name"] == "loop_average: values"
    assert (first["score"], first["max_score"], first["status"]) == (0, 5, "failed")
    assert "values differ" in first["output"] and "upper instead of lower triangle" in first["output"]
    assert first["visibility"] == "visible"
    hidden = data["tests"][1]
    assert hidden["status"] == "passed" and hidden["visibility"] == "after_published"
    assert hidden["extra_data"]["seed"] == 1234
    assert data["extra_data"]["seeds"] == {"loop_average": 1234, "tril_average": 1235}
    assert "conftest.py" in data["output"]


def test_grades_csv_header_rows_and_no_formulas(course):
    rows = [Graded(result("ann", True, course=course)), Graded(result("=HYPERLINK(1)", False, course=course))]
    text = grades_csv(course, rows)
    table = list(csv.reader(io.StringIO(text)))
    assert table[0] == ["student", *course.keys, "total"]
    assert table[1][:3] == ["ann", "10", "10"] and table[1][-1] == "20"
    assert table[1][3] == ""  # a stage that was not graded is left empty, not 0
    assert table[2][0] == "'=HYPERLINK(1)" and table[2][-1] == "10"


def test_report_escapes_every_student_string_and_loads_nothing(course):
    figures = heatmaps(__import__("torch").eye(3), __import__("torch").ones(3, 3), f"weights {EVIL}")
    rows = [
        Graded(
            result(EVIL, False, mistake=EVIL, message=f"got {EVIL}", figures=figures, course=course),
            notes=[f"ignored: {EVIL}"],
        ),
        Graded(result("bea", True, course=course)),
    ]
    page = render_report(course, rows, meta={"seed": 7})
    for text in (page, render_feedback(course, rows[0]), render_feedback(course, rows[0], hidden_detail=True)):
        assert "<img" not in text and "&lt;script&gt;" in text
        # the only scripts: ours (named by its hash in the page's policy) and the heatmaps' JSON data block
        scripts = re.findall(r"<script([^>]*)>(.*?)</script>", text, re.S)
        assert [attrs for attrs, _ in scripts] == [' type="application/json" id="matrices"', ""]
        assert scripts[1][1] == SCRIPT and "<" not in scripts[0][1]
        digest = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
        assert f"script-src 'sha256-{digest}'" in text and "default-src 'none'" in text
        for bad in ('src="http', 'href="http', "<link", "@import", "<iframe", "innerHTML"):
            assert bad not in text
        parser = _Balanced()
        parser.feed(text)
        assert parser.ok(), parser.stack
    assert "<svg" in page  # the histogram; heatmaps are drawn by the script from data-heatmap
    assert page.count('class="heatmap" data-heatmap=') == 2  # the student's two failed stages


def test_class_stats_count_mistakes_once_per_student(course):
    rows = [Graded(result(s, False, mistake="softmax over the wrong dim", course=course)) for s in "abc"]
    rows.append(Graded(result("d", True, course=course)))
    stats = class_stats(course, rows)
    assert stats.mistakes[0][1:] == ("softmax over the wrong dim", 3)
    assert stats.n == 4 and stats.stage_full["loop_average"] == 1
    assert ("values", 1, 4) in stats.check_rates["loop_average"]


def test_heatmap_data_is_short_and_survives_non_finite_values():
    data = heatmap_data({"title": "w", "expected": [[1.0, 0.0], [0.123456, 0.5]], "got": [[1.0, "nan"], ["-inf", 0.5]]})
    assert data == {"title": "w", "expected": [[1.0, 0.0], [0.123, 0.5]], "got": [[1.0, "nan"], ["-inf", 0.5]]}
    assert heatmap_data({"expected": "x", "got": []}) is None
    store = Matrices()
    assert [store.ref([[1, 0]]), store.ref([[0, 1]]), store.ref([[1, 0]])] == [0, 1, 0]  # each matrix stored once
    assert heatmaps(__import__("torch").ones(2, 3), __import__("torch").ones(2, 3), "not square") is None


def test_heatmaps_are_attention_weights_or_masks_never_outputs():
    """Multi-head attention's output (B, T, C) is square when T == C: drawing it as weights would mislead."""
    import torch

    torch.manual_seed(0)
    weights = torch.softmax(torch.randn(2, 5, 5), -1)
    assert heatmaps(weights, weights.flip(-1), "weights") is not None
    assert heatmaps(torch.ones(5, 5).tril().bool(), torch.ones(5, 5).bool(), "mask") is not None
    additive = torch.zeros(5, 5).masked_fill(torch.ones(5, 5).triu(1).bool(), float("-inf"))
    assert heatmaps(additive, torch.zeros(5, 5), "additive mask") is not None
    out = torch.randn(2, 6, 6)
    assert heatmaps(out, out + 1, "multi_head_attention(x) output") is None


class _Balanced(HTMLParser):
    VOID = {"meta", "br", "img", "input", "link", "hr"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.errors = 0

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        else:
            self.errors += 1

    def ok(self) -> bool:
        return not self.stack and not self.errors


# ───────────────────────────── the report's layout, size and look ─────────────────────────────

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _course_with(course, n_extra: int):
    """The course with ``n_extra`` more stages (the report takes its stages from course.yml, however many)."""
    extra = tuple(
        dataclasses.replace(
            course.stages[-1],
            key=f"extra_stage_{i}",
            title=f"An extra stage {i}",
            file=f"{9 + i:02d}_extra.py",
            index=len(course.stages) + i,
        )
        for i in range(n_extra)
    )
    return dataclasses.replace(course, stages=course.stages + extra)


def test_report_reads_in_order_with_stage_names_and_a_short_list_of_hardest_checks(course):
    big = _course_with(course, 3)  # three stages more than course.yml has
    rows = make_class(big, 40)
    page = render_report(big, rows, meta={"seed": 3, "isolation": "test", "devices": "cpu"})
    order = [page.index(f'id="{section}"') for section in ("class", "hardest", "mistakes", "grades")]
    assert page.index("<header>") < order[0] and order == sorted(order)
    header = page[page.index("<header>") : page.index("</header>")]
    assert '>40</div><div class="k">submissions' in header and "mean" in header and "median" in header
    grades = page[page.index('id="gradetable"') : page.index("</thead>")]
    for stage in big.stages:  # columns named by number and key, in course order, every stage
        assert f'<span class="num">{stage.number}</span> {stage.key.replace("_", " ")}' in grades
    assert [int(n) for n in re.findall(r'<span class="num">(\d+)</span>', grades)] == list(
        range(1, len(big.stages) + 1)
    )
    assert grades.count('data-sort="num"') == len(big.stages) + 2 and 'data-sort="text"' in grades
    hardest = page[order[1] : order[2]]
    listed = hardest[: hardest.index("<details>")].count("<tr>") - 1
    assert listed == 10  # the ten hardest first; every check one click away in <details>
    rates = [int(x) for x in re.findall(r"\((\d+) %\)", hardest[: hardest.index("<details>")])]
    assert rates == sorted(rates)
    assert page.count("<template id=") == 40 and 'id="filter"' in page and 'id="show"' in page


def test_common_mistakes_count_only_labels_of_failed_checks(course):
    rows = [Graded(result(s, False, mistake="softmax over the wrong dim", course=course)) for s in "ab"]
    passed = result("c", True, course=course)
    passed.stages[0].checks[0].mistake = "a label on a check that passed"
    rows.append(Graded(passed))
    stats = class_stats(course, rows)
    assert [m for _, m, _ in stats.mistakes] == ["softmax over the wrong dim"] * 2  # one per stage, 2 students
    page = render_report(course, rows)
    assert "a label on a check that passed" not in page


def test_report_size_grows_gently_with_the_class(course):
    """500 students (generated, about 13 failed checks each, with heatmaps): a few KB each; what the browser
    lays out at once (all but the students' details, kept in inert templates) under 1.3 KB a student."""
    core = dataclasses.replace(course, stages=tuple(s for s in course.stages if s.track == "core"))  # 8 stages
    sizes, eager = {}, {}
    for n in (250, 500):
        page = render_report(core, make_class(core, n), meta={"seed": 1})
        sizes[n] = len(page.encode())
        eager[n] = len(re.sub(r"<template.*?</template>", "", page, flags=re.S).encode())
    assert sizes[500] < 3_000_000, sizes
    assert (sizes[500] - sizes[250]) / 250 < 5_000, sizes
    assert (eager[500] - eager[250]) / 250 < 1_300, eager


def test_the_header_cannot_be_cut_off():
    """Nothing in the header clips or truncates: no fixed sizes, no hidden overflow, no ellipsis; the cards and
    the facts wrap. (The screenshot test below shows it in a browser.)"""
    rules = {k.strip(): v for k, v in re.findall(r"([^{}]+)\{([^}]*)\}", re.sub(r"\s+", " ", CSS_TEXT))}
    for selector, body in rules.items():
        names = {s.strip() for s in selector.split(",")}
        if names & {"header", "h1", ".course", ".cards", ".card", ".card .v", ".card .k", ".facts"}:
            assert "text-overflow" not in body and "overflow:hidden" not in body.replace(" ", ""), selector
            assert not re.search(r"(^|;)\s*(height|max-width|width)\s*:", body), selector
    assert "flex-wrap:wrap" in rules[".cards"] and "overflow-wrap:anywhere" in rules[".facts"]


def test_feedback_summarises_hidden_checks_unless_asked(course):
    figures = heatmaps(__import__("torch").eye(3), __import__("torch").ones(3, 3), "hidden weights")
    r = result("ann", True, course=course)
    secret = CheckResult(
        name="SECRET-CHECK-NAME",
        passed=False,
        points=0.0,
        max_points=2.5,
        hidden=True,
        message="input x = SECRET-INPUT, expected SECRET-EXPECTED",
        mistake="a named mistake",
        figures=figures,
    )
    r.stages[0].checks.append(secret)
    page = render_feedback(course, Graded(r))
    for leak in ("SECRET-CHECK-NAME", "SECRET-INPUT", "SECRET-EXPECTED", "hidden weights", "seed 1234", ">1234<"):
        assert leak not in page, leak
    assert "2 hidden checks (7.5 pts): 1 passed (5 pts)" in page  # loop_average: count and points
    assert "1 hidden check failed (2.5 pts)" in page
    full = render_feedback(course, Graded(r), hidden_detail=True)
    for shown in ("SECRET-CHECK-NAME", "SECRET-INPUT", "SECRET-EXPECTED", "hidden, seed 1234", "a named mistake"):
        assert shown in full, shown
    assert "SECRET-INPUT" in render_report(course, [Graded(r)])  # the instructor's report shows everything


@pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium: apt-get install -y chromium to check the report in a browser"
)
def test_the_report_works_in_a_real_browser(tmp_path, course):
    """Headless Chromium runs the page's script under its own policy: a link to a student opens their detail
    from its template, and the heatmaps are drawn with axes, a colour scale and the differing cells outlined."""
    page = render_report(course, make_class(course, 30), meta={"seed": 1})
    path = tmp_path / "report.html"
    path.write_text(page)
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=3000",
            "--dump-dom",
            f"{path.as_uri()}#student=student0001",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    dom = done.stdout
    assert '<tr class="detail">' in dom, done.stderr[-2000:]
    detail = dom[dom.index('<tr class="detail">') :]
    detail = detail[: detail.index("</tr>", detail.index("</td></tr>") if "</td></tr>" in detail else 0) + 5]
    assert "student0001 —" in detail and 'aria-label="expected"' in detail and "key position j" in detail
    assert 'class="differs"' in detail and "data-heatmap=" not in detail
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=3000",
            "--dump-dom",
            f"{path.as_uri()}#filter=student0001",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    rows = re.findall(r"<tr data-i=[^>]*>", done.stdout)
    assert len(rows) == 30 and sum(" hidden" in r for r in rows) == 29  # the filter ran: one student left
    assert ">1 of 30 students<" in done.stdout
    shot = tmp_path / "report.png"
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--screenshot={shot}",
            "--window-size=1280,1000",
            path.as_uri(),
        ],
        capture_output=True,
        timeout=120,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(
    CHROMIUM is None or shutil.which("make") is None,
    reason="no chromium (apt-get install -y chromium) or no make: the screenshot target cannot run",
)
def test_the_screenshot_target_runs(tmp_path):
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [
            "make",
            "-s",
            "report-screenshot",
            f"REPORT_DIR={tmp_path}",
            "REPORT_STUDENTS=60",
            f"PY={sys.executable}",
            "CHROMIUM=" + str(CHROMIUM),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "report.html").stat().st_size > 10_000
    assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_reports_detail_is_brief_and_links_the_full_feedback_page(course):
    r = result(
        "ann/../<x> y", False, message="values differ (3 of 9)\n  expected [1, 2]\n  got      [0, 0]", course=course
    )
    page = render_report(course, [Graded(r)], feedback_links=True)
    assert "values differ (3 of 9)" in page and "expected [1, 2]" not in page
    assert 'href="ann/../%3Cx%3E%20y/feedback.html"' not in page  # a path in the id stays one folder name
    assert 'href="ann%2F..%2F%3Cx%3E%20y/feedback.html"' in page
    assert "href=" not in render_report(course, [Graded(r)])  # the generated preview has no feedback pages
    assert "expected [1, 2]" in render_feedback(course, Graded(r))


def test_pass_rates_count_only_students_whose_stage_was_graded(course):
    rows = [Graded(result(s, True, course=course)) for s in "ab"]
    missing = result("c", False, message="file missing: 01_loop_average.py", course=course)
    missing.stages[0].status, missing.stages[0].note = "missing", "file missing: 01_loop_average.py"
    rows.append(Graded(missing))
    rates = dict((name, (p, r)) for name, p, r in class_stats(course, rows).check_rates["loop_average"])
    assert rates["values"] == (2, 2)  # the missing file is counted under "missing", not as a failed check
    assert class_stats(course, rows).stage_status["loop_average"]["missing"] == 1
