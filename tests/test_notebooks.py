"""The self-learner notebooks in notebooks/: generated from solutions/ and course.yml, in sync, and working.

The slow test runs every notebook once with a real kernel (nbclient): with the reference code in the code cell
(full marks wherever the stage has graders) and as generated, with the stubs (runs to the end, reports "not
implemented yet"). Kernels run two at a time.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import pytest

from autograder.course import load_course
from autograder.instructor.notebooks import notebook_name, render_notebook, stale_notebooks
from autograder.runner import grader_files

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_notebooks_are_up_to_date():
    stale = stale_notebooks()
    assert not stale, f"stale notebooks: {[str(p) for p in stale]}; run `make notebooks`"


def test_notebook_cells_come_from_the_one_source():
    course = load_course()
    for stage in course.stages:
        nb = json.loads((ROOT / "notebooks" / notebook_name(stage)).read_text(encoding="utf-8"))
        text, code, hints, check = ["".join(c["source"]) for c in nb["cells"]]
        assert stage.title in text and stage.summary.split()[0] in text
        assert "BEGIN SOLUTION" not in code and "raise NotImplementedError" in code
        for name in stage.functions:
            assert re.search(rf"^(def|class) {name}\b", code, re.M), (stage.key, name)
        assert hints.count("<details>") == len(stage.hints)
        assert f'check_stage("{stage.key}", globals()' in check
        assert all(not c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")


def test_stale_notebooks_notices_a_change(tmp_path):
    import shutil

    for name in ("course.yml", "solutions", "exercises", "notebooks"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    assert stale_notebooks(tmp_path) == []
    course_yml = tmp_path / "course.yml"
    course_yml.write_text(
        course_yml.read_text().replace("title: Averaging the past with loops", "title: Averaging the past, slowly")
    )
    assert [p.name for p in stale_notebooks(tmp_path)] == ["01_loop_average.ipynb"]


def _text(outputs: list) -> str:
    parts = []
    for out in outputs:
        parts.append(out.get("text", "") if "text" in out else out.get("data", {}).get("text/plain", ""))
        if out.get("output_type") == "error":
            parts.append("ERROR " + out.get("ename", "") + ": " + out.get("evalue", ""))
    return ANSI.sub("", "".join("".join(p) if isinstance(p, list) else p for p in parts))


async def _execute_all(notebooks: list, cwd: Path, parallel: int = 2) -> None:
    from nbclient import NotebookClient

    gate = asyncio.Semaphore(parallel)

    async def one(nb):
        async with gate:
            client = NotebookClient(
                nb, timeout=300, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(cwd)}}
            )
            await client.async_execute()

    await asyncio.gather(*(one(nb) for nb in notebooks))


@pytest.mark.slow
def test_notebooks_run_on_a_real_kernel(tmp_path, monkeypatch):
    import nbformat

    course = load_course()
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    solved_dir, stub_dir = tmp_path / "solved", tmp_path / "stubs"
    solved_dir.mkdir()
    stub_dir.mkdir()
    solved = {s.key: render_notebook(course, s, solved=True) for s in course.stages}
    stubs = {
        s.key: nbformat.reads((ROOT / "notebooks" / notebook_name(s)).read_text(encoding="utf-8"), as_version=4)
        for s in course.stages
    }

    monkeypatch.setenv("AUTOGRADER_STATE", str(tmp_path / "state"))
    # one progress store for every check cell (and `check`): the stubs first, the solutions last
    asyncio.run(_execute_all(list(stubs.values()), stub_dir))
    asyncio.run(_execute_all(list(solved.values()), solved_dir))

    graded = {s.key for s in course.stages if grader_files(course, [s.key])}
    for stage in course.stages:
        for kind, nb in (("solved", solved[stage.key]), ("stub", stubs[stage.key])):
            errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
            assert not errors, (stage.key, kind, _text(errors))
        out = _text(solved[stage.key].cells[-1].outputs)
        stub_out = _text(stubs[stage.key].cells[-1].outputs)
        if stage.key in graded:
            assert f"Stage {stage.number} is done." in out, (stage.key, out)
            assert f"{stage.points}/{stage.points}" in out
            assert "Not implemented yet" in stub_out, (stage.key, stub_out)
            assert f"0/{stage.points}" in stub_out
        else:
            assert "no automatic checks yet" in out and "no automatic checks yet" in stub_out
    # the check cells keep the course's progress in the store `check` reads
    progress = json.loads((tmp_path / "state" / "progress.json").read_text())
    assert {k: v["score"] for k, v in progress.items()} == {k: course.stage(k).points for k in graded}


def test_a_known_mistake_is_shown_once(capsys):
    from autograder.inprocess import _print_checks, show_stage
    from autograder.results import CheckResult, StageResult

    course = load_course()
    mistake = "upper instead of lower triangle (torch.triu)"
    check = CheckResult(
        name="weights: rows sum to 1",
        passed=False,
        points=0.0,
        max_points=1.0,
        message=f"causal_mean_weights(4): wrong values\n  this looks like a known mistake: {mistake}",
        mistake=mistake,
    )
    result = StageResult(key="tril_average", title="t", max_score=10, checks=[check])
    show_stage(course, result)
    assert " ".join(capsys.readouterr().out.split()).count(mistake) == 1
    _print_checks(result, "public checks")
    assert " ".join(capsys.readouterr().out.split()).count(mistake) == 1
