"""The Gradescope autograder: the zip's contents, and run_autograder graded against a simulated /autograder tree
(``AUTOGRADER_ROOT`` points it at a temporary folder), with results.json checked against Gradescope's documented
fields."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.instructor import gradescope

ROOT = Path(__file__).resolve().parent.parent
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
TOP_FIELDS = {
    "score",
    "execution_time",
    "output",
    "output_format",
    "test_output_format",
    "test_name_format",
    "visibility",
    "stdout_visibility",
    "extra_data",
    "tests",
    "leaderboard",
}
TEST_FIELDS = {
    "score",
    "max_score",
    "status",
    "name",
    "name_format",
    "number",
    "output",
    "output_format",
    "tags",
    "visibility",
    "extra_data",
}


def validate_results(data: dict) -> None:
    """results.json as Gradescope documents it: only known fields, each of the documented type."""
    assert isinstance(data, dict) and set(data) <= TOP_FIELDS, set(data) - TOP_FIELDS
    assert isinstance(data.get("score"), (int, float)) or all("score" in t for t in data["tests"])
    for key in ("output", "output_format", "test_output_format", "test_name_format"):
        assert isinstance(data.get(key, ""), str)
    assert data.get("visibility", "visible") in VISIBILITY
    assert data.get("stdout_visibility", "visible") in VISIBILITY
    assert isinstance(data.get("extra_data", {}), dict)
    assert isinstance(data.get("execution_time", 0), (int, float))
    assert isinstance(data["tests"], list) and data["tests"]
    for test in data["tests"]:
        assert set(test) <= TEST_FIELDS, set(test) - TEST_FIELDS
        assert isinstance(test["name"], str) and test["name"]
        assert isinstance(test["score"], (int, float)) and isinstance(test["max_score"], (int, float))
        assert 0 <= test["score"] <= test["max_score"] + 1e-9
        assert test.get("status", "passed") in ("passed", "failed")
        assert isinstance(test.get("output", ""), str)
        assert test.get("visibility", "visible") in VISIBILITY
        assert isinstance(test.get("tags", []), list)
    json.dumps(data, allow_nan=False)  # finite numbers only


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    return gradescope.build(tmp_path_factory.mktemp("gs") / "autograder.zip")


def test_the_zip_holds_the_autograder_and_no_solutions(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as zf:
        names = set(zf.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        setup = zf.read("setup.sh").decode()
        run = zf.read("run_autograder").decode()
        contents = {n: zf.read(n) for n in names}
    for needed in (
        "setup.sh",
        "run_autograder",
        "requirements.txt",
        "course.yml",
        "autograder/__main__.py",
        "autograder/runtime/worker.py",
        "autograder/runtime/zygote.py",
        "autograder/sandbox/host.py",
        "autograder/runner.py",
        "autograder/graders/public/test_loop_average.py",
        "autograder/graders/hidden/test_loop_average.py",
        "autograder/oracles/loop_average.py",
    ):
        assert needed in names
    assert modes["setup.sh"] & stat.S_IXUSR and modes["run_autograder"] & stat.S_IXUSR
    assert not any(n.startswith(("solutions/", "exercises/", "tests/")) or "__pycache__" in n for n in names)
    solutions = {p.read_bytes() for p in (ROOT / "solutions").glob("*.py")}
    assert not solutions & set(contents.values())
    assert 'if ! "$PY" -c "import torch" 2>/dev/null' in setup and gradescope.torch_pin() in setup
    assert "download.pytorch.org/whl/cpu" in setup and "bubblewrap" in setup
    assert 'ROOT="${AUTOGRADER_ROOT:-/autograder}"' in run and "gradescope run" in run


def test_the_cli_builds_the_zip(tmp_path):
    from autograder.cli import main

    assert main(["gradescope", "build", str(tmp_path / "out" / "ag.zip")]) == 0
    assert zipfile.is_zipfile(tmp_path / "out" / "ag.zip")


def test_results_without_the_report_module_have_the_documented_fields():
    from autograder.results import CheckResult, StageResult, SubmissionResult

    result = SubmissionResult(
        student="s",
        isolation="test",
        stages=[
            StageResult(
                key="loop_average",
                title="t",
                max_score=10,
                seed=5,
                checks=[
                    CheckResult(
                        name="values",
                        passed=True,
                        points=6.0,
                        max_points=6.0,
                        message="",
                        mistake=None,
                        hidden=False,
                        device=None,
                    ),
                    CheckResult(
                        name="random",
                        passed=False,
                        points=0.0,
                        max_points=4.0,
                        message="differs",
                        mistake=None,
                        hidden=True,
                        device=None,
                    ),
                ],
            )
        ],
    )
    data = gradescope.gradescope_results(result, notes=["a note"])
    validate_results(data)
    assert data["score"] == 6.0
    assert [t["visibility"] for t in data["tests"]] == ["visible", "after_published"]


def _tree(tmp: Path, autograder_zip: Path) -> Path:
    root = tmp / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "submission").mkdir()
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):
        (root / "source" / name).chmod(0o755)
    (root / "submission_metadata.json").write_text(json.dumps({"id": 4242, "users": [{"email": "ada@example.org"}]}))
    return root


def _run_autograder(root: Path, **extra_env) -> dict:
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable, **extra_env)
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads((root / "results" / "results.json").read_text())
    validate_results(data)
    return data


@pytest.mark.slow
def test_run_autograder_grades_stage_files_in_a_simulated_tree(tmp_path, autograder_zip):
    root = _tree(tmp_path, autograder_zip)
    for name in ("01_loop_average.py", "02_tril_average.py"):
        shutil.copy(ROOT / "solutions" / name, root / "submission" / name)
    (root / "submission" / "conftest.py").write_text("raise SystemExit('a planted conftest must never run')\n")
    (root / "submission" / "03_softmax_average.py").write_text("def causal_mask(T, *, device=None):\n    return 1\n")
    data = _run_autograder(root)
    by_stage = {}
    for test in data["tests"]:
        by_stage.setdefault(test["name"].split(":", 1)[0], []).append(test)
    assert sum(t["score"] for t in by_stage["loop_average"]) == pytest.approx(10, abs=1e-3)  # 4 decimals per test
    assert sum(t["score"] for t in by_stage["tril_average"]) == pytest.approx(10, abs=1e-3)
    assert sum(t["score"] for t in by_stage["softmax_average"]) < 10
    assert data["score"] == pytest.approx(sum(t["score"] for t in data["tests"]))
    assert 20 <= data["score"] < 30
    assert any(t["visibility"] == "after_published" for t in data["tests"])  # hidden checks wait for publication
    assert all(t["status"] == "passed" for t in by_stage["loop_average"])
    assert "conftest.py" in data["output"]  # listed as ignored
    assert set(data["extra_data"]["seeds"]) >= {"loop_average", "tril_average"}
    assert data["extra_data"]["isolation"]
    if os.geteuid() == 0:  # learner code ran under a uid of its own, never root
        assert data["extra_data"]["sandbox"]["learner_uid"] >= 60000 and data["extra_data"]["sandbox"]["own_uid"]
        if not data["extra_data"]["sandbox"]["bubblewrap"]:  # the folders were closed to that uid first
            assert stat.S_IMODE((root / "source").stat().st_mode) == 0o700


@pytest.mark.slow
def test_run_autograder_still_grades_without_bubblewrap_and_says_so(tmp_path, autograder_zip):
    """A host without bubblewrap (or without user namespaces) still gets a results.json: graded in the reduced
    fallback, which results.json reports (extra_data and the output the learner sees)."""
    root = _tree(tmp_path, autograder_zip)
    shutil.copy(ROOT / "solutions" / "01_loop_average.py", root / "submission" / "01_loop_average.py")
    data = _run_autograder(root, AUTOGRADER_NO_BWRAP="1")
    assert sum(t["score"] for t in data["tests"] if t["name"].startswith("loop_average:")) == pytest.approx(10)
    assert data["extra_data"]["sandbox"]["level"] == "reduced" and not data["extra_data"]["sandbox"]["bubblewrap"]
    assert data["extra_data"]["isolation"].startswith("REDUCED, no bubblewrap")
    assert "bubblewrap is not available" in data["output"]
    if os.geteuid() == 0:
        assert data["extra_data"]["sandbox"]["learner_uid"] >= 60000


@pytest.mark.slow
def test_run_autograder_grades_a_notebook_in_a_folder(tmp_path, autograder_zip):
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("autograder.instructor.collect")  # notebooks are read by the class grader's collector
    root = _tree(tmp_path, autograder_zip)
    cells = [nbformat.v4.new_markdown_cell("# My attention notebook")]
    for name in ("01_loop_average.py", "02_tril_average.py"):
        cells.append(nbformat.v4.new_code_cell((ROOT / "solutions" / name).read_text()))
    cells.append(nbformat.v4.new_code_cell("print(causal_mean_matmul(torch.ones(1, 3, 2)))"))
    folder = root / "submission" / "my_work"  # the learner uploaded a zip of a folder
    folder.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=cells), str(folder / "attention.ipynb"))
    data = _run_autograder(root)
    scores = {}
    for test in data["tests"]:
        key = test["name"].split(":", 1)[0]
        scores[key] = scores.get(key, 0) + test["score"]
    assert scores["loop_average"] == pytest.approx(10) and scores["tril_average"] == pytest.approx(10)
    assert data["score"] == pytest.approx(20)


def test_each_stages_max_scores_add_up_to_its_points_exactly():
    """Gradescope adds the tests' max_score up: checks of 15/7 points rounded alone would give 15.0003."""
    from autograder.instructor.report import gradescope_json
    from autograder.results import CheckResult, StageResult, SubmissionResult

    stages = []
    for key, points, n in (("a", 15, 7), ("b", 10, 3), ("c", 20, 6), ("d", 12.5, 9)):
        share = points / n
        checks = [
            CheckResult(name=f"c{i}", passed=i % 2 == 0, points=share if i % 2 == 0 else 0.0, max_points=share)
            for i in range(n)
        ]
        stages.append(StageResult(key=key, title=key, max_score=points, checks=checks))
    data = gradescope_json(SubmissionResult(student="s", stages=stages))
    validate_results(data)
    for stage in stages:
        tests = [t for t in data["tests"] if t["name"].startswith(f"{stage.key}: ")]
        assert round(sum(t["max_score"] for t in tests), 9) == stage.max_score
        assert all(t["max_score"] == round(t["max_score"], 4) for t in tests)
        assert all(t["score"] in (0, t["max_score"]) for t in tests)
    assert round(sum(t["max_score"] for t in data["tests"]), 9) == 57.5


def test_the_set_up_installs_the_versions_gradescope_pins():
    """The Makefile installs with constraints.txt, written from the Gradescope pins: a release on the package index
    cannot make the tests run with versions the image does not install."""
    from autograder.instructor import gradescope

    root = Path(__file__).resolve().parents[1]
    assert (root / "constraints.txt").read_text() == gradescope.constraints(), (
        "constraints.txt is stale: write it from autograder.instructor.gradescope.constraints()"
    )
    assert (root / "Makefile").read_text().count("-c constraints.txt") == 2


def test_setup_installs_only_pinned_versions_of_a_closed_set(autograder_zip):
    """Every package setup.sh installs is pinned (==), installed without dependencies (nothing unpinned comes
    along), pinned to the version tested here, and the set holds every dependency of its members."""
    import importlib.metadata as md
    import re

    from packaging.markers import default_environment
    from packaging.requirements import Requirement

    with zipfile.ZipFile(autograder_zip) as zf:
        setup = zf.read("setup.sh").decode()
        zf_lines = zf.read("requirements.txt").decode().splitlines()
        lines = zf_lines + zf.read("requirements-torch.txt").decode().splitlines()
    installs = [line for line in setup.splitlines() if "pip install" in line]
    assert installs and all("--no-deps" in line or re.search(r'"pip==[\d.]+"', line) for line in installs), installs
    assert "pip check" in setup
    env = default_environment()
    pins = {}
    for line in filter(None, lines):
        req = Requirement(line)
        spec = str(req.specifier)
        assert spec.startswith("==") and "," not in spec, line
        key = req.name.lower().replace("_", "-")
        pins[key] = spec[2:]
        if req.marker is None or req.marker.evaluate(env):
            assert md.version(req.name).split("+")[0] == spec[2:], f"{line}: tested with {md.version(req.name)}"
    # every command's dependencies but watch (python -m autograder checks for them) are installed with or without
    # the image's torch
    from autograder.__main__ import REQUIRED

    own = {Requirement(x).name.lower() for x in zf_lines if x}
    assert {{"yaml": "pyyaml"}.get(n, n) for n in REQUIRED} - {"torch"} <= own, own
    for name in ("torch", *pins):
        if name != "torch" and not any(
            Requirement(x).name.lower().replace("_", "-") == name
            and (Requirement(x).marker is None or Requirement(x).marker.evaluate(env))
            for x in lines
            if x
        ):
            continue
        for dep in md.requires(name) or []:
            req = Requirement(dep)
            if req.marker is not None and not req.marker.evaluate(dict(env, extra="")):
                continue
            assert req.name.lower().replace("_", "-") in pins, f"{name} needs {dep}, which is not pinned"
