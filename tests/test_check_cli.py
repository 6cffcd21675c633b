"""The learner's `check` and `hint`: full marks for the solutions, 0 and "not implemented" for the stubs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def autograder(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


@pytest.fixture(scope="module")
def solutions_json():
    proc = autograder("check", str(ROOT / "solutions"), "--json")
    return proc, json.loads(proc.stdout)


@pytest.fixture(scope="module")
def exercises_json():
    proc = autograder("check", str(ROOT / "exercises"), "--json")
    return proc, json.loads(proc.stdout)


def test_solutions_score_full_marks_on_every_stage(solutions_json, course):
    proc, data = solutions_json
    assert proc.returncode == 0, proc.stderr
    assert [s["key"] for s in data["stages"]] == course.keys, "every stage must have graders"
    for stage in data["stages"]:
        failed = [c for c in stage["checks"] if not c["passed"]]
        assert not failed, f"{stage['key']}: {failed}"
        assert stage["score"] == pytest.approx(stage["max_score"], abs=1e-3)
    assert data["score"] == pytest.approx(data["max_score"], abs=1e-3) == course.max_score


def test_json_output_has_the_documented_shape(solutions_json):
    _, data = solutions_json
    assert set(data) >= {"score", "max_score", "stages"}
    for stage in data["stages"]:
        assert set(stage) >= {"key", "score", "max_score", "checks"}
        assert stage["checks"], stage["key"]
        for c in stage["checks"]:
            assert set(c) >= {"name", "passed", "points", "message"}
        # a stage's points are shared among its checks
        assert sum(c["max_points"] for c in stage["checks"]) == pytest.approx(stage["max_score"], abs=1e-3)


def test_untouched_stubs_score_zero_and_say_not_implemented(exercises_json, course):
    proc, data = exercises_json
    assert proc.returncode == 1
    assert data["score"] == 0
    for stage in data["stages"]:
        assert stage["status"] == "not implemented", stage
        first_hint = course.stage(stage["key"]).hints[0]
        for c in stage["checks"]:
            assert not c["passed"]
            assert c["message"].startswith("not implemented yet"), c
            assert "Traceback" not in c["message"]
        assert first_hint in stage["checks"][0]["message"]


def test_json_mode_prints_only_json(exercises_json):
    proc, _ = exercises_json
    json.loads(proc.stdout)  # the whole of stdout parses


def test_table_output_names_the_first_failure_and_a_hint(folder_with, tmp_path):
    folder = folder_with({"02_tril_average.py": ROOT / "tests/mistakes/tril_average__triu.py"})
    proc = autograder("check", str(folder), "--stage", "tril_average", cwd=tmp_path)
    assert proc.returncode == 1
    out = proc.stdout
    assert "tril_average" in out and "first failing check" in out
    assert "upper instead of lower triangle" in out
    assert "autograder hint tril_average" in out
    assert "Traceback" not in out + proc.stderr


def test_hint_reveals_hints_one_by_one_and_remembers(tmp_path, course):
    hints = course.stage("softmax_average").hints
    first = autograder("hint", "softmax_average", cwd=tmp_path)
    second = autograder("hint", "softmax_average", cwd=tmp_path)
    assert first.returncode == second.returncode == 0
    assert hints[0] in first.stdout and "1/" in first.stdout
    assert hints[1] in second.stdout and "2/" in second.stdout
    for _ in range(len(hints)):
        last = autograder("hint", "softmax_average", cwd=tmp_path)
    assert all(h in last.stdout for h in hints)


def test_unknown_stage_is_a_clear_error(tmp_path):
    proc = autograder("hint", "no_such_stage", cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown stage 'no_such_stage'" in proc.stderr and "Traceback" not in proc.stderr


def test_missing_and_broken_files_cost_only_their_stage(folder_with):
    folder = folder_with({"01_loop_average.py": None, "02_tril_average.py": "def causal_mean_weights(T:\n"})
    proc = autograder("check", str(folder), "--json", "--stage", "loop_average")
    data = json.loads(proc.stdout)
    (stage,) = data["stages"]
    assert stage["status"] == "missing" and stage["score"] == 0
    assert "file missing: 01_loop_average.py" in stage["checks"][0]["message"]
    proc = autograder("check", str(folder), "--json", "--stage", "tril_average")
    (stage,) = json.loads(proc.stdout)["stages"]
    assert stage["status"] == "error" and stage["score"] == 0
    assert "could not be imported" in stage["checks"][0]["message"] and "SyntaxError" in stage["checks"][0]["message"]
