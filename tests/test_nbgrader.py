"""The nbgrader course, end to end with real nbgrader and real kernels.

`python -m autograder nbgrader build` writes the course; stock nbgrader commands then generate the release,
validate, autograde four students (a perfect one, an untouched one, one with a typical mistake, one whose correct
code makes PyTorch warn and writes to stderr), generate feedback and export the grades. The exported grades must
equal those of the sandboxed `python -m autograder grade` on the same submitted notebooks, stage by stage; the
release and the feedback must hold no solution code and no hidden test code.

The heavy work runs once (a module fixture); the tests then look at what it left behind.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.course import load_course
from autograder.instructor.generate import solution_regions, strip_solution

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "attention"
SEED = 20240611

# A typical mistake for stage 2: the weights are right, but the product keeps a Python loop over time (values
# right, the "does not grow with T" check lost). An answer whose every value is wrong (torch.triu) earns nothing.
LOOP_MISTAKE = """import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    w = torch.tril(torch.ones(T, T, device=device, dtype=dtype))
    return w / w.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    w = causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype)
    return torch.stack([w[t, : t + 1] @ x[..., : t + 1, :] for t in range(x.shape[-2])], dim=-2)
"""

# A correct stage 1 whose code makes PyTorch warn, warns itself and writes to stderr, at Python and fd level.
NOISY_WRAPPER = """

def causal_mean_loop(x):
    import os
    import sys
    import warnings

    torch.tensor(x)  # PyTorch: "To copy construct from a tensor, it is recommended to use ..."
    warnings.warn("a warning from the learner's own code")
    print("a line on sys.stderr", file=sys.stderr)
    os.write(2, b"a line on file descriptor 2\\n")
    return _loop_average_impl(x)
"""


def jupyter_env(base: Path) -> dict:
    """A private Jupyter set-up: the python3 kernel is this interpreter; no user config is read."""
    spec = base / "data" / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
            }
        )
    )
    env = dict(os.environ)
    # nbgrader runs `alembic` (a console script) by name to set up its database: the interpreter's bin must be on PATH
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(
        JUPYTER_PATH=str(base / "data"),
        JUPYTER_CONFIG_DIR=str(base / "config"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]),
    )
    env.pop("AUTOGRADER_COURSE", None)
    return env


def run(args: list[str], cwd: Path, env: dict, timeout: int = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc


def nbgrader(*args: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "nbgrader", *args], cwd, env)


def load_nb(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def cell_text(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def with_solution_cell(nb: dict, code: str) -> dict:
    nb = json.loads(json.dumps(nb))
    cells = [c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    assert len(cells) == 1
    cells[0]["source"] = code
    return nb


def noisy_loop_average(source_nb: dict) -> dict:
    code = next(cell_text(c) for c in source_nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("solution"))
    assert "def causal_mean_loop(" in code
    return with_solution_cell(
        source_nb, code.replace("def causal_mean_loop(", "def _loop_average_impl(") + NOISY_WRAPPER
    )


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    base = tmp_path_factory.mktemp("nbgrader")
    env = jupyter_env(base / "jupyter")
    course_dir = base / "course"
    out = {"dir": course_dir, "env": env}

    run(
        [
            sys.executable,
            "-m",
            "autograder",
            "nbgrader",
            "build",
            str(course_dir),
            "--assignment",
            ASSIGNMENT,
            "--seed",
            str(SEED),
        ],
        ROOT,
        env,
    )
    source = course_dir / "source" / ASSIGNMENT
    release = course_dir / "release" / ASSIGNMENT
    names = sorted(p.name for p in source.glob("*.ipynb"))
    assert names, "the build wrote no notebooks"
    out["names"] = names

    nbgrader("generate_assignment", ASSIGNMENT, cwd=course_dir, env=env)
    first = names[0]
    # one nbgrader process validates both, reporting on them in the order given
    out["validate"] = nbgrader("validate", str(source / first), str(release / first), cwd=course_dir, env=env).stdout

    submitted = course_dir / "submitted"
    students = {"perfect": {}, "untouched": {}, "mistake": {}, "noisy": {}}
    for name in names:
        students["perfect"][name] = load_nb(source / name)
        students["untouched"][name] = load_nb(release / name)
    if "02_tril_average.ipynb" in names:
        students["mistake"]["02_tril_average.ipynb"] = with_solution_cell(
            load_nb(release / "02_tril_average.ipynb"), LOOP_MISTAKE
        )
    if "01_loop_average.ipynb" in names:
        students["noisy"]["01_loop_average.ipynb"] = noisy_loop_average(load_nb(source / "01_loop_average.ipynb"))
    for student, notebooks in students.items():
        folder = submitted / student / ASSIGNMENT
        folder.mkdir(parents=True)
        for name, nb in notebooks.items():
            (folder / name).write_text(json.dumps(nb), encoding="utf-8")
    out["students"] = students

    nbgrader("autograde", ASSIGNMENT, cwd=course_dir, env=env)
    nbgrader("generate_feedback", ASSIGNMENT, cwd=course_dir, env=env)
    nbgrader("export", cwd=course_dir, env=env)
    with open(course_dir / "grades.csv", newline="", encoding="utf-8") as fh:
        out["nbgrader_grades"] = {row["student_id"]: row for row in csv.DictReader(fh)}

    # the sandboxed class grader on the very same submitted/ folder, with the course's seed
    grade_out = base / "grade-out"
    run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            str(course_dir),
            "--out",
            str(grade_out),
            "--seed",
            str(SEED),
            "--assignment",
            ASSIGNMENT,
            "--quiet",
        ],
        ROOT,
        env,
    )
    with open(grade_out / "grades.csv", newline="", encoding="utf-8") as fh:
        out["grade_grades"] = {row["student"]: row for row in csv.DictReader(fh)}
    return out


def stage_of(course, notebook: str):
    return course.by_file(notebook.replace(".ipynb", ".py"))


@pytest.mark.slow
def test_build_writes_only_notebooks_and_the_config(pipeline):
    course_dir = pipeline["dir"]
    config = (course_dir / "nbgrader_config.py").read_text()
    assert "c.CourseDirectory.course_id = " in config and "c.ExecutePreprocessor.timeout = " in config
    assert f"AUTOGRADER_SEED = {SEED}" in config
    files = [p for p in (course_dir / "source").rglob("*") if p.is_file()]
    assert files and all(p.suffix == ".ipynb" for p in files), files


@pytest.mark.slow
def test_release_has_no_solution_and_no_hidden_tests(pipeline):
    course = load_course()
    release = pipeline["dir"] / "release" / ASSIGNMENT
    files = [p for p in release.rglob("*") if p.is_file()]
    assert sorted(p.name for p in files) == pipeline["names"]  # nothing but the notebooks
    for path in files:
        text = path.read_text(encoding="utf-8")
        nb = json.loads(text)
        # code cells: the hints (markdown) may spell out an answer in words, on purpose
        code = "\n".join(cell_text(c) for c in nb["cells"] if c["cell_type"] == "code")
        for marker in ("BEGIN HIDDEN TESTS", "nbgrader_score", str(SEED), "BEGIN SOLUTION", "END SOLUTION"):
            assert marker not in text, f"{path.name} contains {marker!r}"
        stage = stage_of(course, path.name)
        solution = (course.root / "solutions" / stage.file).read_text(encoding="utf-8")
        outside = strip_solution(solution, stage.file)
        for region in solution_regions(solution):
            for line in region.splitlines():
                line = line.split("#")[0].strip()
                if len(line) >= 8 and line not in outside:
                    assert line not in code, f"{path.name} leaks solution code: {line!r}"


@pytest.mark.slow
def test_validate_passes_on_the_source_and_fails_on_the_release(pipeline):
    text = pipeline["validate"]
    verdicts = re.findall(
        r"Success! Your notebook passes all the tests|VALIDATION FAILED ON \d+ CELL\(S\)|"
        r"NOTEBOOK HAS CHANGED|cell type has changed",
        text,
        flags=re.I,
    )
    assert verdicts == ["Success! Your notebook passes all the tests", "VALIDATION FAILED ON 1 CELL(S)"], text
    release_part = text.split("VALIDATION FAILED", 1)[1]
    assert "nbgrader_public" in release_part and "not implemented yet" in release_part  # the public test cell


@pytest.mark.slow
def test_autograde_scores(pipeline):
    course = load_course()
    grades = pipeline["nbgrader_grades"]
    for name in pipeline["names"]:
        stage = stage_of(course, name)
        nb_col = name.replace(".ipynb", "")
        assert float(grades["perfect"][nb_col]) == pytest.approx(stage.points), name
        assert float(grades["untouched"][nb_col]) == 0.0, name
    if "02_tril_average" in grades["mistake"]:
        assert 0.0 < float(grades["mistake"]["02_tril_average"]) < 10.0  # partial credit from the cell's value
    if "01_loop_average" in grades["noisy"]:
        assert float(grades["noisy"]["01_loop_average"]) == 10.0  # stderr and warnings cost nothing
    total = sum(stage_of(course, n).points for n in pipeline["names"])
    assert float(grades["perfect"]["score"]) == pytest.approx(total)


@pytest.mark.slow
def test_hidden_test_cells_print_nothing_on_stderr(pipeline):
    autograded = pipeline["dir"] / "autograded"
    seen = 0
    for path in autograded.rglob("*.ipynb"):
        for c in load_nb(path)["cells"]:
            meta = c.get("metadata", {}).get("nbgrader", {})
            if meta.get("grade") and c["cell_type"] == "code":
                seen += 1
                assert not [o for o in c.get("outputs", []) if o.get("name") == "stderr"], (path, meta["grade_id"])
                if meta["grade_id"].endswith("_hidden"):
                    values = [o for o in c["outputs"] if o["output_type"] == "execute_result"]
                    assert len(values) == 1, (path, c["outputs"])
    assert seen


@pytest.mark.slow
def test_feedback_does_not_reveal_hidden_tests(pipeline):
    feedback = list((pipeline["dir"] / "feedback").rglob("*.html"))
    expected = sum(len(nbs) for nbs in pipeline["students"].values())
    assert len(feedback) == expected
    for path in feedback:
        text = path.read_text(encoding="utf-8")
        for marker in ("BEGIN HIDDEN TESTS", "nbgrader_score", str(SEED)):
            assert marker not in text, f"{path} shows hidden test code ({marker!r})"
        assert "Hidden checks" in text  # the cell is there, without its code


@pytest.mark.slow
def test_exported_grades_equal_the_class_grader_stage_by_stage(pipeline):
    course = load_course()
    nbg, ours = pipeline["nbgrader_grades"], pipeline["grade_grades"]
    assert set(ours) == set(pipeline["students"])
    for student in pipeline["students"]:
        for name in pipeline["names"]:
            stage = stage_of(course, name)
            expected = float(ours[student][stage.key] or 0.0)
            got = float(nbg[student][name.replace(".ipynb", "")] or 0.0)
            assert got == pytest.approx(expected, abs=0.01), (student, stage.key)
        assert float(nbg[student]["score"]) == pytest.approx(
            sum(float(ours[student][stage_of(course, n).key] or 0) for n in pipeline["names"]), abs=0.05
        )


# -- the build itself (no kernels) ----------------------------------------------------------------------------
def test_build_is_repeatable_and_keeps_its_seed(tmp_path, capsys):
    from autograder.instructor.nbgrader_build import build

    course = load_course()
    first = build(course, tmp_path, seed=None)
    assert first["written"] and first["assignment"] == course.id
    again = build(course, tmp_path)
    assert again["seed"] == first["seed"] and again["written"] == [] and again["removed"] == []


def test_build_refuses_a_foreign_config_and_warns_about_stray_files(tmp_path):
    from autograder.instructor.nbgrader_build import build

    course = load_course()
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    with pytest.raises(ValueError, match="--force"):
        build(course, tmp_path, seed=1)
    messages = []
    stray = tmp_path / "source" / "week1" / "helpers.py"
    stray.parent.mkdir(parents=True)
    stray.write_text("SECRET = 1\n")
    report = build(
        course,
        tmp_path,
        seed=1,
        assignment="week1",
        force=True,
        log=lambda *a, **k: messages.append(" ".join(map(str, a))),
    )
    assert report["stray"] == [stray]
    assert any("helpers.py" in m and "release" in m for m in messages)


def test_source_notebook_cells():
    from autograder.instructor.nbgrader_build import notebook_stage_source, render_source_notebook

    course = load_course()
    stage = course.stage("tril_average")
    nb = render_source_notebook(course, stage, seed=5)
    kinds = [(c.cell_type, c.metadata["nbgrader"]) for c in nb.cells]
    solution = [c for c in nb.cells if c.metadata["nbgrader"]["solution"]]
    grades = [c.metadata["nbgrader"] for c in nb.cells if c.metadata["nbgrader"]["grade"]]
    assert len(solution) == 1 and "### BEGIN SOLUTION" in solution[0].source
    assert "# stub:" not in solution[0].source and "# TODO: Implement causal_mean_weights" in solution[0].source
    assert [(g["grade_id"], g["points"]) for g in grades] == [
        ("tril_average_public", 0),
        ("tril_average_hidden", stage.points),
    ]
    hidden = nb.cells[-1].source
    assert hidden.index("### BEGIN HIDDEN TESTS") < hidden.index("nbgrader_score") < hidden.index("### END HIDDEN")
    assert all(m["locked"] for kind, m in kinds if not m["solution"])
    # the learner's code, as the class grader slices it out of a notebook
    code = notebook_stage_source(nb)
    assert "def causal_mean_matmul" in code and "nbgrader_score" not in code and "nbgrader_public" not in code


def test_hidden_checks_take_the_student_id_from_the_autograde_folder(tmp_path, monkeypatch):
    from autograder import inprocess

    folder = tmp_path / "autograded" / "alice" / ASSIGNMENT
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert inprocess._student_id() == "alice"  # as `grade` names the student of submitted/alice/
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    assert inprocess._student_id() == "notebook"


# -- the students' kernels need only the student release -------------------------------------------------------
VISIBLE_CELL = r"""
import importlib.util, pathlib, sys
import autograder
assert pathlib.Path(autograder.__file__).resolve().parent == pathlib.Path(sys.argv[1]).resolve() / "autograder"
assert importlib.util.find_spec("autograder.oracles") is None, "the oracles are there"
assert not (pathlib.Path(autograder.__file__).parent / "graders" / "hidden").exists(), "the hidden graders are there"
namespace = {}
exec(pathlib.Path(sys.argv[2]).read_text(), namespace)  # the student's code cell
exec(sys.argv[3], namespace)                            # the visible test cell, as generated
"""


@pytest.fixture(scope="module")
def student_release(tmp_path_factory):
    from autograder.instructor import release

    out = tmp_path_factory.mktemp("release") / "student"
    return release.build_release(out, verify=False, log=lambda *a: None).out


@pytest.mark.parametrize("answer", ["solution", "mistake"])
def test_visible_test_cells_run_on_the_student_release_alone(student_release, tmp_path, answer):
    """The visible cell of the tril_average notebook, run in a kernel that has only the student release (no
    oracles, no hidden graders, no instructor package): it passes on the solution and names the failing check."""
    from autograder.instructor.nbgrader_build import public_cell_source

    course = load_course()
    stage = course.stage("tril_average")
    code = tmp_path / "code.py"
    code.write_text((ROOT / "solutions" / stage.file).read_text() if answer == "solution" else LOOP_MISTAKE)
    # the release's package and the course's dependencies, without site-packages' own start-up files (an
    # editable install of this repository would put the instructor's modules back under `autograder`)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    deps = [p for p in sys.path if p and os.path.isdir(p) and not os.path.isdir(os.path.join(p, "autograder"))]
    env["PYTHONPATH"] = os.pathsep.join([str(student_release), *deps])
    env["AUTOGRADER_STATE"] = str(tmp_path / "state")
    proc = subprocess.run(
        [sys.executable, "-S", "-c", VISIBLE_CELL, str(student_release), str(code), public_cell_source(stage)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if answer == "solution":
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "(public checks)" in proc.stdout and "✗" not in proc.stdout
    else:
        assert proc.returncode != 0 and "ChecksFailed" in proc.stderr, proc.stdout + proc.stderr
        assert "✗" in proc.stdout and "Python loop" in proc.stdout  # the failing check, named, with its message
