"""The student release: built from this repository, it gives no answer away and works on its own.

One release is built per module run. It is scanned for solution code, hidden graders and reference code; then a
fresh copy gets its own set-up (its Makefile, its pyproject, its own .venv: the packages already installed here are
reused through a .pth file so that nothing is downloaded) and its own `check` runs on the stubs, the solutions and
typical mistakes, with the same verdicts as this repository's grading. The GitHub Classroom workflow is read and
every command it runs is run.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import json
import keyword
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from autograder.instructor import release as rel
from autograder.instructor.catalogue import mistake_source
from autograder.course import load_course
from autograder.instructor.generate import solution_regions

ROOT = Path(__file__).resolve().parent.parent
MISTAKES = ROOT / "tests" / "mistakes"
TYPICAL = "tril_average__triu"  # upper-triangular weights in stage 2
TYPICAL_SOURCE = '''"""MISTAKE: upper instead of lower triangle (torch.triu)"""
import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    w = torch.triu(torch.ones(T, T, device=device, dtype=dtype))
    return w / w.sum(dim=-1, keepdim=True)


def causal_mean_matmul(x):
    return causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype) @ x
'''
# mistakes the release never saw when its expected values were recorded
UNSEEN = {
    "loop_average": """import torch


def causal_mean_loop(x):
    return x.clone()  # no averaging at all
""",
    "tril_average": """import torch


def causal_mean_weights(T, *, device=None, dtype=None):
    return torch.tril(torch.ones(T, T, device=device, dtype=dtype)) / T


def causal_mean_matmul(x):
    return causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype) @ x
""",
}


def _norm(line: str) -> str:
    return " ".join(line.split())


GENERIC = set(keyword.kwlist) | set(dir(builtins)) | {"_", "self", "cls"}


def _distinctive(source: str) -> set[str]:
    """Lines worth searching for: whitespace collapsed, at least 16 characters, not a comment, not a bare opener
    (``raise ValueError(``), not made of keywords and builtins alone (``for _ in range(3):``)."""
    keep = set()
    for line in source.splitlines():
        text = _norm(line)
        names = set(re.findall(r"[A-Za-z_]\w*", re.sub(r"(['\"]).*?\1", "", text)))
        if (
            len(text) >= 16
            and not text.startswith("#")
            and not re.fullmatch(r"(raise |return )?[\w.]*[(\[{]", text)
            and not names <= GENERIC
        ):
            keep.add(text)
    return keep


# ───────────────────────────── the release ─────────────────────────────


@pytest.fixture(scope="module")
def course():
    return load_course(ROOT / "course.yml")


def _declared(path: Path) -> str | None:
    doc = (ast.get_docstring(ast.parse(path.read_text())) or "").strip()
    name = doc.splitlines()[0].removeprefix("MISTAKE:").strip() if doc.startswith("MISTAKE:") else ""
    return None if name.lower() in ("", "none") else name


def _sample() -> list[Path]:
    """A few files of the mistake catalogue: the typical one, and one named mistake per other stage."""
    chosen = {}
    for path in sorted(MISTAKES.glob("*__*.py")):
        key = path.name.split("__")[0]
        if path.stem == TYPICAL or (key not in chosen and _declared(path)):
            chosen[key] = path
    return sorted(chosen.values())


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "student"
    return rel.build_release(out, verify=False, log=lambda *a: None)  # as `make release`, but verified below


@pytest.fixture(scope="module")
def release_lines(built):
    lines = {}
    for path in built.out.rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", "replace")
            lines[str(path.relative_to(built.out))] = {_norm(l) for l in text.splitlines()}
    return lines


def test_release_has_the_student_files(built, course):
    out = built.out
    for s in course.stages:
        stub = (out / "exercises" / s.file).read_text()
        assert "NotImplementedError" in stub and "BEGIN SOLUTION" not in stub
        assert stub.startswith(f"# Stage {s.number}:") and "edit the solution" not in stub
    for name in (
        "course.yml",
        "README.md",
        "Makefile",
        "pyproject.toml",
        ".gitignore",
        ".github/workflows/classroom.yml",
        "autograder/cli.py",
        "autograder/runtime/worker.py",
        "autograder/runtime/zygote.py",
        "autograder/data/snapshot/index.json",
        "autograder/data/snapshot/arrays.npz",
    ):
        assert (out / name).is_file(), name
    assert built.stages and set(built.stages) <= set(course.keys)
    for key in built.stages:
        assert (out / "autograder" / "graders" / "public" / f"test_{key}.py").is_file()
    readme = (out / "README.md").read_text()
    for words in ("make check", "hint", "watch", "hidden", "GitHub Classroom", "Actions"):
        assert words in readme, words
    assert "@@" not in readme + (out / "Makefile").read_text() + (out / "pyproject.toml").read_text()
    assert "torch>=2.2" in (out / "pyproject.toml").read_text()
    makefile = (out / "Makefile").read_text()
    assert "torch==2.13.0" in makefile and "import torch" in makefile  # the pin, only when torch is missing


def test_no_solution_code_in_the_release(release_lines):
    sources = sorted((ROOT / "solutions").glob("*.py"))
    assert sources
    leaks = []
    for path in sources:
        regions = solution_regions(path.read_text())
        assert regions, f"{path.name} has no solution region"
        for region in regions:
            for line in _distinctive(region):
                leaks += [f"{name}: {line}" for name, lines in release_lines.items() if line in lines]
    assert not leaks, "solution code in the release:\n" + "\n".join(leaks)
    assert not any(name.startswith("solutions") for name in release_lines)


def test_no_hidden_checks_in_the_release(release_lines):
    hidden = sorted((ROOT / "autograder" / "graders" / "hidden").glob("*.py"))
    assert hidden
    assert not [n for n in release_lines if "hidden" in Path(n).parts], "a graders/hidden folder was shipped"
    public = set()
    for path in (ROOT / "autograder" / "graders").rglob("*.py"):
        if "hidden" not in path.parts:
            public |= _distinctive(path.read_text())
    leaks = []
    for path in hidden:
        source = path.read_text()
        names = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
        public_names = {
            n.name
            for p in (ROOT / "autograder" / "graders" / "public").glob("*.py")
            for n in ast.parse(p.read_text()).body
            if isinstance(n, ast.FunctionDef)
        }
        for name in set(names) - public_names:  # a check only the hidden module has
            leaks += [
                f"{n}: def {name}"
                for n, lines in release_lines.items()
                if any(l.startswith(f"def {name}(") for l in lines)
            ]
        for line in _distinctive(source) - public:
            leaks += [f"{n}: {line}" for n, lines in release_lines.items() if line in lines]
    assert not leaks, "hidden checks in the release:\n" + "\n".join(leaks)


def test_no_reference_code_in_the_release(release_lines):
    assert not [n for n in release_lines if "oracles" in Path(n).parts]
    modules = [p.stem for p in (ROOT / "autograder" / "oracles").glob("*.py") if p.stem != "__init__"]
    assert modules
    leaks = []
    for stem in modules:
        module = importlib.import_module(f"autograder.oracles.{stem}")
        for _, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ != module.__name__:
                continue
            source = textwrap.dedent(inspect.getsource(fn))
            body = ast.parse(source).body[0].body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # the docstring may well match the stub's
            if not body:
                continue
            code = "\n".join(source.splitlines()[body[0].lineno - 1 : body[-1].end_lineno])
            for line in _distinctive(code):
                leaks += [
                    f"{n}: {line} (from oracles/{stem}.py:{fn.__name__})"
                    for n, lines in release_lines.items()
                    if line in lines
                ]
    assert not leaks, "reference code in the release:\n" + "\n".join(leaks)


def test_only_allowlisted_modules_ship(built):
    shipped = sorted(str(p.relative_to(built.out / "autograder")) for p in (built.out / "autograder").rglob("*.py"))
    for name in shipped:
        assert name in rel.SHIPPED or name.startswith("graders/"), name
    for tool in ("generate.py", "release.py", "grade.py", "gradescope.py", "nbgrader_build.py", "report.py"):
        assert f"instructor/{tool}" not in shipped


def test_the_leak_scanner_catches_planted_leaks(built, tmp_path):
    assert rel.scan_for_leaks(built.out) == []
    copy = tmp_path / "planted"
    shutil.copytree(built.out, copy)
    solution = sorted((ROOT / "solutions").glob("*.py"))[1]
    region = solution_regions(solution.read_text())[0]
    (copy / "exercises" / solution.name).write_text(textwrap.indent(region, "    "))
    hidden = sorted((ROOT / "autograder" / "graders" / "hidden").glob("*.py"))[0]
    shutil.copy(hidden, copy / "autograder" / "graders" / "public" / "test_extra.py")
    oracle = sorted(p for p in (ROOT / "autograder" / "oracles").glob("*.py") if p.stem != "__init__")[0]
    shutil.copy(oracle, copy / "autograder" / "graders" / "helper.py")
    found = "\n".join(rel.scan_for_leaks(copy))
    assert f"solution region of solutions/{solution.name}" in found
    assert f"hidden grader {hidden.name}" in found
    assert f"oracles/{oracle.name}" in found


def test_release_refuses_to_overwrite_other_folders(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(rel.ReleaseError, match="not empty"):
        rel.build_release(tmp_path, verify=False, log=lambda *a: None)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_new_release_replaces_the_old_one_but_keeps_git(tmp_path):
    old = tmp_path / "student"
    (old / rel.MANIFEST).parent.mkdir(parents=True)
    (old / rel.MANIFEST).write_text("{}")
    (old / ".git").mkdir()
    (old / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (old / "exercises").mkdir()
    (old / "exercises" / "stale.py").write_text("")
    rel._prepare(old)
    assert sorted(p.name for p in old.iterdir()) == [".git"]
    assert (old / ".git" / "HEAD").is_file()


def test_a_module_release_py_does_not_know_stops_the_build(tmp_path):
    package = tmp_path / "autograder"
    for name in rel.SHIPPED:
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(rel.PACKAGE / name, package / name)
    (package / "graders" / "public").mkdir()
    (package / "mystery.py").write_text("X = 1\n")
    (package / "runner.py").write_text((package / "runner.py").read_text() + "\nfrom .mystery import X\n")
    with pytest.raises(rel.ReleaseError, match="mystery"):
        rel.select_modules(package)
    (package / "runner.py").write_text((rel.PACKAGE / "runner.py").read_text() + "\nfrom .instructor import generate\n")
    (package / "instructor").mkdir()
    (package / "instructor" / "__init__.py").write_text("")
    (package / "instructor" / "generate.py").write_text("")
    with pytest.raises(rel.ReleaseError, match="never ships"):
        rel.select_modules(package)


def test_release_is_a_subcommand():
    from autograder.cli import build_parser

    args = build_parser().parse_args(["release", "dist/student", "--no-verify"])
    assert args.func is rel.cmd_release and args.out_dir == "dist/student" and args.no_verify


# ───────────────────────────── a fresh copy with its own set-up ─────────────────────────────


def _site_dirs() -> list[str]:
    """Where this interpreter finds the course's dependencies (torch, numpy, ...)."""
    import numpy
    import pytest as _pytest
    import rich
    import torch

    dirs = [sysconfig.get_paths()["purelib"]]
    for module in (torch, numpy, yaml, rich, _pytest):
        parent = str(Path(module.__file__).resolve().parent.parent)
        if parent not in dirs:
            dirs.append(parent)
    return dirs


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    # offline and fast: the dependencies are already there
    env.update(PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONWARNINGS="ignore")
    return env


@pytest.fixture(scope="module")
def student_repo(built):
    """A copy of the release set up by its own Makefile, in its own .venv."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # readable by others: without bubblewrap, a root judge runs learner code under an unprivileged uid
    home = Path(tempfile.mkdtemp(prefix="release-clone-"))
    home.chmod(0o755)
    repo = home / "attention-student"
    shutil.copytree(built.out, repo)
    yield _set_up(repo)
    shutil.rmtree(home, ignore_errors=True)


def _set_up(repo: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    purelib = Path(
        subprocess.run(
            [str(repo / ".venv" / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (purelib / "_reuse_installed_packages.pth").write_text("\n".join(_site_dirs()) + "\n")
    proc = subprocess.run(["make", "setup"], cwd=repo, env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    where = subprocess.run(
        [str(repo / ".venv" / "bin" / "python"), "-c", "import autograder; print(autograder.__file__)"],
        cwd=repo.parent,
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert Path(where.stdout.strip()).resolve() == (repo / "autograder" / "__init__.py").resolve(), where
    return repo


def _place(repo: Path, course, files: dict[str, str]) -> None:
    """Copy ``files`` (stage file name -> source, one per stage) over the student's exercises/."""
    assert sorted(files) == sorted(s.file for s in course.stages)
    for name, text in files.items():
        (repo / "exercises" / name).write_text(text)


def _solutions(course) -> dict[str, str]:
    return {s.file: (ROOT / "solutions" / s.file).read_text() for s in course.stages}


def _stubs(built, course) -> dict[str, str]:
    return {s.file: (built.out / "exercises" / s.file).read_text() for s in course.stages}


def _check_json(repo: Path, *args: str) -> tuple[int, dict]:
    proc = subprocess.run(
        [".venv/bin/python", "-m", "autograder", "check", *args, "--json"],
        cwd=repo,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    try:
        return proc.returncode, json.loads(proc.stdout)
    except ValueError:
        pytest.fail(f"check --json printed no JSON (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}")


@pytest.mark.slow
def test_check_on_the_untouched_stubs_gives_zero(student_repo, built, course):
    _place(student_repo, course, _stubs(built, course))
    proc = subprocess.run(["make", "check"], cwd=student_repo, env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert "not implemented yet" in proc.stdout
    assert "total 0/" in proc.stdout
    hint = subprocess.run(
        ["make", "hint", f"STAGE={built.stages[0]}"],
        cwd=student_repo,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert hint.returncode == 0 and "Hint 1/" in hint.stdout, hint.stdout + hint.stderr


@pytest.mark.slow
def test_check_on_the_solutions_gives_full_marks_and_agrees(student_repo, built, course):
    _place(student_repo, course, _solutions(course))
    code, data = _check_json(student_repo)
    assert [s["key"] for s in data["stages"]] == built.stages
    for stage in data["stages"]:
        assert stage["checks"], stage["key"]
        assert all(c["passed"] for c in stage["checks"]), [c for c in stage["checks"] if not c["passed"]]
        assert stage["score"] == pytest.approx(stage["max_score"])
    assert code == 0
    assert rel.comparable(data) == rel.comparable(built.instructor["solutions"])


@pytest.mark.slow
def test_a_typical_mistake_loses_points_and_is_named(student_repo, built, course):
    path = MISTAKES / f"{TYPICAL}.py"
    source = mistake_source(path) if path.is_file() else TYPICAL_SOURCE
    name = _declared(path) if path.is_file() else "upper instead of lower triangle (torch.triu)"
    key = TYPICAL.split("__")[0]
    files = _solutions(course)
    files[course.stage(key).file] = source
    _place(student_repo, course, files)
    code, data = _check_json(student_repo, "--stage", key)
    assert code != 0
    (stage,) = data["stages"]
    assert stage["score"] < stage["max_score"]
    assert name in {c["mistake"] for c in stage["checks"]}, stage["checks"]
    assert any(name in c["message"] for c in stage["checks"])
    if f"mistake-{TYPICAL}" in built.instructor:
        want = built.instructor[f"mistake-{TYPICAL}"]
        assert rel.comparable(data) == [s for s in rel.comparable(want) if s[0] == key]


GRADE_MANY = """
import json, sys
from pathlib import Path
import autograder
from autograder.course import load_course
from autograder.results import check_json
from autograder.runner import Submission, grade
spec = json.loads(Path(sys.argv[1]).read_text())
course = load_course()
subs = [Submission(name, {k: (course.stage(k).file, text) for k, text in files.items()})
        for name, files in spec.items()]
results = grade(course, subs, seed=7)
print(json.dumps({"autograder": autograder.__file__, "results": {r.student: check_json(r) for r in results}}))
"""


@pytest.mark.slow
def test_release_and_instructor_agree_check_by_check(student_repo, built, course, tmp_path, sandbox):
    """Mistakes from the catalogue, and mistakes the release never saw: the release's grading (public checks
    only, because it has no others) agrees with this repository's grading, which adds the hidden checks."""
    from autograder.runner import Submission, grade

    spec = {}
    for path in _sample():
        key = path.name.split("__")[0]
        if key in built.stages:
            spec[f"mistake-{path.stem}"] = {key: mistake_source(path)}
    for key, source in UNSEEN.items():
        if key in built.stages:
            spec[f"unseen-{key}"] = {key: source}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    proc = subprocess.run(
        [".venv/bin/python", "-c", GRADE_MANY, str(tmp_path / "spec.json")],
        cwd=student_repo,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    assert Path(got["autograder"]).resolve() == (student_repo / "autograder" / "__init__.py").resolve()
    # the instructor's run: public and hidden checks, as `python -m autograder grade` runs them
    subs = [
        Submission(name, {k: (course.stage(k).file, text) for k, text in files.items()}) for name, files in spec.items()
    ]
    full = {r.student: r for r in grade(course, subs, stages=built.stages, seed=7, sandbox=sandbox)}
    for name, files in spec.items():
        (key,) = files
        mine = [s for s in rel.comparable(got["results"][name]) if s[0] == key]
        assert mine and mine[0][2], f"{name}: no checks ran"
        assert not all(c[1] for c in mine[0][2]), f"{name} passed every check"
        checks = mine[0][2]
        public = [c for c in full[name].stage(key).checks if not c.hidden]
        assert any(c.hidden for c in full[name].stage(key).checks), f"{key}: no hidden checks ran"
        if name.startswith("mistake-"):
            # recorded at release time: the public-only run agrees in everything, points included ...
            recorded = [s for s in rel.comparable(built.instructor[name]) if s[0] == key]
            assert mine == recorded, name
            # ... and the full run's public checks give the same verdicts, messages and mistake names
            assert [(c[0], c[1], c[4], c[5]) for c in checks] == [
                (c.name, c.passed, c.message, c.mistake) for c in public
            ], name
        else:  # never seen by the release: the verdicts agree
            assert [(c[0], c[1]) for c in checks] == [(c.name, c.passed) for c in public], name


# ───────────────────────────── GitHub Classroom ─────────────────────────────


def _workflow(built) -> dict:
    return yaml.safe_load((built.out / ".github" / "workflows" / "classroom.yml").read_text())


def test_classroom_workflow_is_valid_and_scores_each_stage(built, course):
    flow = _workflow(built)
    assert "push" in flow["on"]
    (job,) = flow["jobs"].values()
    steps = job["steps"]
    assert any(s.get("uses", "").startswith("actions/checkout@") for s in steps)
    assert any("make setup" in s.get("run", "") for s in steps)
    graders = [s for s in steps if s.get("uses", "").startswith("classroom-resources/autograding-command-grader@")]
    assert [s["id"] for s in graders] == built.stages
    for step in graders:
        stage = course.stage(step["id"])
        assert step["with"]["max-score"] == stage.points
        assert step["with"]["command"] == rel.stage_command(stage.key)
        assert int(step["with"]["timeout"]) >= 1
    (reporter,) = [
        s for s in steps if s.get("uses", "").startswith("classroom-resources/autograding-grading-reporter@")
    ]
    runners = [r for r in re.split(r"[\s,]+", reporter["with"]["runners"]) if r]
    assert runners == built.stages
    for runner in runners:  # the reporter reads <RUNNER>_RESULTS, base64 JSON written by the grader step
        want = f"${{{{steps.{runner}.outputs.result}}}}"
        assert reporter["env"][f"{runner.upper()}_RESULTS"].replace(" ", "") == want


@pytest.mark.slow
def test_classroom_commands_pass_on_solutions_and_fail_on_stubs(student_repo, built, course):
    (job,) = _workflow(built)["jobs"].values()
    commands = {s["id"]: s["with"]["command"] for s in job["steps"] if s.get("id") in built.stages}
    assert list(commands) == built.stages
    env = {**_env(), **{k: str(v) for k, v in job.get("env", {}).items()}}  # as the workflow sets them

    def run_all() -> dict[str, tuple[int, str]]:
        def one(item):
            key, command = item
            proc = subprocess.run(
                ["bash", "-c", command], cwd=student_repo, env=env, capture_output=True, text=True, timeout=600
            )
            return key, (proc.returncode, (proc.stdout + proc.stderr)[-2000:])

        with ThreadPoolExecutor(2) as pool:
            return dict(pool.map(one, commands.items()))

    _place(student_repo, course, _solutions(course))
    failed = {key: out for key, (code, out) in run_all().items() if code != 0}
    assert not failed, "\n".join(f"{key}:\n{out}" for key, out in failed.items())
    _place(student_repo, course, _stubs(built, course))
    passed = {key: out for key, (code, out) in run_all().items() if code == 0}
    assert not passed, "\n".join(f"{key}:\n{out}" for key, out in passed.items())
