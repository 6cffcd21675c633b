"""course.yml's ``select`` gives a class a subset of the stages, and every generated artefact follows it."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest
import yaml

from autograder.course import CourseError, load_course

ROOT = Path(__file__).resolve().parent.parent
SUBSET = ["loop_average", "causal_attention", "padding_and_cross_attention"]


def course_root(tmp_path: Path, select) -> Path:
    """A course folder like the repository's (solutions, the package by link), with ``select`` set."""
    root = tmp_path / "course"
    shutil.copytree(ROOT / "solutions", root / "solutions")
    (root / "autograder").symlink_to(ROOT / "autograder", target_is_directory=True)
    data = yaml.safe_load((ROOT / "course.yml").read_text())
    data["select"] = select
    (root / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def files_of(keys) -> list[str]:
    everything = load_course(ROOT / "course.yml")
    return sorted(s.file for s in everything.all_stages if s.key in keys)


def test_the_repository_selects_every_stage(course):
    assert course.stages == course.all_stages
    assert [s.track for s in course.stages[:8]] == ["core"] * 8
    assert all(s.track == "advanced" for s in course.stages[8:])


@pytest.mark.parametrize(
    "select, keys",
    [
        ("core", lambda c: [s.key for s in c.all_stages if s.track == "core"]),
        ("advanced", lambda c: [s.key for s in c.all_stages if s.track == "advanced"]),
        (SUBSET[::-1], lambda c: SUBSET),  # course order, whatever the order of the list
        (
            ["core", "padding_and_cross_attention"],
            lambda c: [s.key for s in c.all_stages if s.track == "core" or s.key == SUBSET[-1]],
        ),
    ],
)
def test_select_picks_stages_in_course_order_and_keeps_their_numbers(tmp_path, select, keys):
    course = load_course(course_root(tmp_path, select) / "course.yml")
    assert course.keys == keys(course) and course.keys
    for stage in course.stages:
        assert stage.number == int(stage.file.split("_")[0])  # the number its file carries
    assert course.max_score == sum(s.points for s in course.stages)
    for left_out in (s.key for s in course.all_stages if s.key not in course.keys):
        with pytest.raises(KeyError, match="unknown stage"):
            course.stage(left_out)


@pytest.mark.parametrize(
    "select, where, words",
    [
        ("everything", "select", "neither 'all', a track"),
        (["core", "attention_soup"], "select[1]", "'attention_soup' is neither"),
        ([], "select", "non-empty list"),
        (7, "select", "non-empty list"),
    ],
)
def test_a_bad_selection_names_the_field(tmp_path, select, where, words):
    with pytest.raises(CourseError) as err:
        load_course(course_root(tmp_path, select) / "course.yml")
    assert str(err.value).startswith(f"course.yml: {where}: "), str(err.value)
    assert words in str(err.value)


def test_a_bad_track_names_the_field(tmp_path):
    root = course_root(tmp_path, "all")
    data = yaml.safe_load((root / "course.yml").read_text())
    data["stages"][2]["track"] = "all"
    (root / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(CourseError, match=r"^course.yml: stages\[2\].track: must be an identifier"):
        load_course(root / "course.yml")


def test_an_unselected_stage_needs_no_file(tmp_path):
    root = course_root(tmp_path, "core")
    (root / "solutions" / files_of([SUBSET[-1]])[0]).unlink()
    assert load_course(root / "course.yml").keys[-1] == "multi_head_attention"


def test_a_subset_generates_only_its_stages(tmp_path):
    """Stubs, notebooks, the nbgrader course, the student release and the Gradescope zip hold the selected
    stages and no other; switching to a subset removes the generated files of the others."""
    from autograder.instructor import gradescope, nbgrader_build, notebooks
    from autograder.instructor.generate import stale_exercises, write_exercises
    from autograder.instructor.release import select_modules

    root = course_root(tmp_path, "all")
    write_exercises(root)
    notebooks.write_notebooks(root)
    assert len(list((root / "exercises").glob("*.py"))) == len(load_course(root / "course.yml").stages)

    data = yaml.safe_load((root / "course.yml").read_text())
    data["select"] = SUBSET
    (root / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert stale_exercises(root)  # the stubs of the stages left out are stale until regenerated
    write_exercises(root)
    notebooks.write_notebooks(root)
    assert not stale_exercises(root) and not notebooks.stale_notebooks(root)
    wanted = files_of(SUBSET)
    assert sorted(p.name for p in (root / "exercises").glob("*.py")) == wanted
    assert sorted(p.stem for p in (root / "notebooks").glob("*.ipynb")) == [Path(f).stem for f in wanted]

    course = load_course(root / "course.yml")
    nb_dir = tmp_path / "nbgrader"
    nbgrader_build.build(course, nb_dir, log=lambda *a, **k: None)
    built = sorted(p.name for p in nb_dir.rglob("*.ipynb"))
    assert len(built) == len(SUBSET) and all(any(k in name for name in built) for k in SUBSET), built

    shipped = select_modules(root / "autograder", set(course.keys))
    assert sorted(m for m in shipped if m.startswith("graders/public/test_")) == sorted(
        f"graders/public/test_{k}.py" for k in SUBSET
    )

    archive = gradescope.build(tmp_path / "autograder.zip", repo=root)
    with zipfile.ZipFile(archive) as zf:
        (tmp_path / "unzipped").mkdir()
        (tmp_path / "unzipped" / "course.yml").write_bytes(zf.read("course.yml"))
    assert load_course(tmp_path / "unzipped" / "course.yml", check_files=False).keys == SUBSET


def test_check_and_grade_follow_the_selection(tmp_path, sandbox):
    from autograder.runner import Submission, grade

    root = course_root(tmp_path, ["loop_average", "tril_average"])
    course = load_course(root / "course.yml")
    sub = Submission("s", {s.key: (s.file, (ROOT / "solutions" / s.file).read_text()) for s in course.stages})
    (result,) = grade(course, [sub], sandbox=sandbox, seed=1)
    assert [s.key for s in result.stages] == ["loop_average", "tril_average"]
    assert result.score == result.max_score == course.max_score


def test_the_command_line_select_replaces_the_manifests(tmp_path):
    """``--select`` (e.g. the demo's ``--select core``) overrides course.yml's ``select`` for one command, with
    the same meaning and errors; ``grade`` gives its judges the selected stages."""
    import json
    import subprocess
    import sys

    core = load_course(select="core")
    assert [s.number for s in core.stages] == list(range(1, 9)) and len(core.all_stages) > 8
    assert [s.key for s in load_course(select=["core", "kv_cache"]).stages][-1] == "kv_cache"
    with pytest.raises(CourseError, match="select"):
        load_course(select="nonsense")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "--select",
            "loop_average,tril_average",
            "check",
            str(ROOT / "solutions"),
            "--json",
            "--public-only",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert [s["key"] for s in json.loads(proc.stdout)["stages"]] == ["loop_average", "tril_average"]
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "--select",
            "loop_average",
            "grade",
            str(ROOT / "examples" / "class"),
            "--out",
            str(out),
            "--quiet",
            "--timeout",
            "5",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "grades.csv").read_text().splitlines()[0] == "student,loop_average,total"
