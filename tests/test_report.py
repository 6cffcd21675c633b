"""The class grader's outputs for people: Gradescope's results.json, grades.csv, report.html. Student strings are
hostile (ids are folder names, messages quote their errors): everything is escaped, the page is self-contained."""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser

from autograder.checks import heatmaps
from autograder.instructor.report import (Graded, class_stats, gradescope_json, grades_csv, heatmap_svg, render_feedback,
                               render_report)
from autograder.results import CheckResult, StageResult, SubmissionResult

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def result(student: str, passed: bool, *, mistake: str | None = None, message: str = "", figures=None,
           course=None) -> SubmissionResult:
    stages = []
    for stage in course.stages[:2]:
        checks = [CheckResult(name="values", passed=passed, points=stage.points / 2 if passed else 0.0,
                              max_points=stage.points / 2, message="" if passed else message, mistake=mistake,
                              figures=None if passed else figures),
                  CheckResult(name="random inputs", passed=True, points=stage.points / 2,
                              max_points=stage.points / 2, hidden=True)]
        stages.append(StageResult(key=stage.key, title=stage.title, max_score=stage.points, checks=checks,
                                  seed=1234 + stage.index))
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
    rows = [Graded(result(EVIL, False, mistake=EVIL, message=f"got {EVIL}", figures=figures, course=course),
                   notes=[f"ignored: {EVIL}"]),
            Graded(result("bea", True, course=course))]
    page = render_report(course, rows, meta={"seed": 7})
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;" in page
    for bad in ("<script", "src=\"http", "href=\"http", "<link", "@import", "<iframe"):
        assert bad not in page
    assert page.count("<svg") >= 3  # histogram + expected and submitted heatmaps
    parser = _Balanced()
    parser.feed(page)
    assert parser.ok(), parser.stack
    feedback = render_feedback(course, rows[0])
    assert "<script" not in feedback and "&lt;script&gt;" in feedback


def test_class_stats_count_mistakes_once_per_student(course):
    rows = [Graded(result(s, False, mistake="softmax over the wrong dim", course=course)) for s in "abc"]
    rows.append(Graded(result("d", True, course=course)))
    stats = class_stats(course, rows)
    assert stats.mistakes[0][1:] == ("softmax over the wrong dim", 3)
    assert stats.n == 4 and stats.stage_full["loop_average"] == 1
    assert ("values", 1, 4) in stats.check_rates["loop_average"]


def test_heatmaps_mark_differences_and_survive_non_finite_values():
    svg = heatmap_svg([[1.0, "nan"], ["-inf", 0.5]], lo=0.0, hi=1.0, against=[[1.0, 0.0], [0.0, 0.5]])
    assert svg.count("<rect") == 4 and svg.count('stroke="#d4141a"') == 2
    assert heatmaps(__import__("torch").ones(2, 3), __import__("torch").ones(2, 3), "not square") is None


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
