"""course.yml is validated on load, and every error names the file and the field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder.course import CourseError, load_course

ROOT = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, data) -> Path:
    (tmp_path / "solutions").mkdir(exist_ok=True)
    for f in (ROOT / "solutions").glob("*.py"):
        (tmp_path / "solutions" / f.name).write_text(f.read_text())
    path = tmp_path / "course.yml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path


def good() -> dict:
    return yaml.safe_load((ROOT / "course.yml").read_text())


def test_the_course_loads_in_manifest_order(course):
    assert course.keys == [s["key"] for s in good()["stages"]]
    assert [s.number for s in course.stages] == list(range(1, len(course.stages) + 1))
    assert all(s.points > 0 and s.hints for s in course.stages)
    assert course.max_score == sum(s.points for s in course.stages)


@pytest.mark.parametrize(
    "mutate, where, words",
    [
        (lambda d: d["stages"][2].pop("points"), "stages[2].points", "missing"),
        (lambda d: d["stages"][0].update(points=-3), "stages[0].points", "positive integer"),
        (lambda d: d["stages"][0].update(points="ten"), "stages[0].points", "positive integer"),
        (lambda d: d["stages"][1].update(key="attention soup"), "stages[1].key", "must be an identifier"),
        (lambda d: d["stages"][1].update(key="../x"), "stages[1].key", "must be an identifier"),
        (lambda d: d["stages"][1].update(key=7), "stages[1].key", "must be an identifier"),
        (lambda d: d["stages"][1].update(file=d["stages"][0]["file"]), "stages[1].file", "used by two stages"),
        (lambda d: d["stages"][3].update(file="04_missing.py"), "stages[3].file", "exists in neither"),
        (lambda d: d["stages"][3].update(file="../../etc/passwd"), "stages[3].file", "plain .py file name"),
        (lambda d: d["stages"][4].update(hints=[]), "stages[4].hints", "non-empty list"),
        (lambda d: d["stages"][4].pop("title"), "stages[4].title", "missing"),
        (lambda d: d["stages"][6].update(by_hand="yes"), "stages[6].by_hand", "true or false"),
        (lambda d: d["stages"].insert(1, dict(d["stages"][0])), "stages[1].key", "appears twice"),
        (lambda d: d["stages"].insert(0, d["stages"].pop(1)), "stages[0].file", "is numbered 2 but is stage 1"),
        (lambda d: d.update(stages=[]), "stages", "missing or empty"),
    ],
)
def test_malformed_course_names_file_and_field(tmp_path, mutate, where, words):
    data = good()
    mutate(data)
    with pytest.raises(CourseError) as err:
        load_course(write(tmp_path, data))
    assert str(err.value).startswith(f"course.yml: {where}: "), str(err.value)
    assert words in str(err.value)


def test_invalid_yaml_names_the_line(tmp_path):
    with pytest.raises(CourseError, match=r"course.yml: line \d+, column \d+: not valid YAML"):
        load_course(write(tmp_path, "stages:\n  - key: loop_average\n    file: [unclosed\n"))


def test_unreadable_course_file(tmp_path):
    with pytest.raises(CourseError, match="cannot be read"):
        load_course(tmp_path / "nope.yml")


def test_cli_reports_course_errors_without_a_traceback(tmp_path):
    data = good()
    data["stages"][0]["points"] = 0
    path = write(tmp_path, data)
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "--course", str(path), "check", str(ROOT / "solutions")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    assert "course.yml: stages[0].points: must be a positive integer" in proc.stderr
    assert "Traceback" not in proc.stderr
