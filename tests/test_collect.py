"""Finding submissions in a class folder: only the expected files are read, notebooks are sliced per stage, and
whatever cannot be read costs only the stages that needed it (with a note that says why)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autograder.instructor.collect import (
    Collected,
    collect_class,
    collect_student,
    notebook_cells,
    read_capped,
    slice_notebook,
    ReadError,
)

ROOT = Path(__file__).resolve().parent.parent
SOL = ROOT / "solutions"


def notebook(cells: list[tuple[str, str]], nbformat: int = 4) -> str:
    return json.dumps(
        {
            "nbformat": nbformat,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [
                {
                    "cell_type": kind,
                    "metadata": {},
                    "source": src.splitlines(keepends=True),
                    **({"outputs": [], "execution_count": None} if kind == "code" else {}),
                }
                for kind, src in cells
            ],
        }
    )


def solution_body(file: str) -> str:
    return (SOL / file).read_text()


def run_source(source: str) -> dict:
    ns: dict = {}
    exec(compile(source, "<sliced>", "exec"), ns)  # trusted test content
    return ns


# ───────────────────────────── stage files ─────────────────────────────


def test_only_stage_files_are_read_and_the_rest_is_noted(tmp_path, course):
    folder = tmp_path / "amy"
    folder.mkdir()
    (folder / "01_loop_average.py").write_text(solution_body("01_loop_average.py"))
    (folder / "02_tril_average.py").write_text("def causal_mean_weights(T): ...\n")
    for planted in ("conftest.py", "pytest.ini", "sitecustomize.py", "torch.py"):
        (folder / planted).write_text("raise SystemExit('planted file was executed')\n")
    (folder / "sub").mkdir()
    sub = collect_student(course, folder)
    assert sub.student == "amy"
    assert set(sub.sources) == {"loop_average", "tril_average"}
    assert sub.sources["loop_average"] == ("01_loop_average.py", solution_body("01_loop_average.py"))
    for stage in course.stages[2:]:
        assert sub.problems[stage.key] == f"file missing: {stage.file}"
    note = next(n for n in sub.notes if n.startswith("ignored"))
    for planted in ("conftest.py", "pytest.ini", "sitecustomize.py", "torch.py", "sub"):
        assert planted in note
    assert not any("planted" in text for _, text in sub.sources.values())


def test_links_fifos_and_huge_files_are_not_read(tmp_path, course):
    folder = tmp_path / "bo"
    folder.mkdir()
    os.symlink(SOL / "01_loop_average.py", folder / "01_loop_average.py")  # the reference solution, via a link
    os.mkfifo(folder / "02_tril_average.py")  # opening a FIFO for reading would block forever
    (folder / "03_softmax_average.py").write_bytes(b"#" * 1_000_001)
    sub = collect_student(course, folder)
    assert not sub.sources
    assert "symbolic link" in sub.problems["loop_average"]
    assert "not a regular file" in sub.problems["tril_average"]
    assert "larger than 1 MB" in sub.problems["softmax_average"]


def test_read_capped_refuses_links_even_to_small_files(tmp_path):
    target = tmp_path / "t.py"
    target.write_text("x = 1\n")
    os.symlink(target, tmp_path / "l.py")
    assert read_capped(target, 100) == b"x = 1\n"
    with pytest.raises(ReadError, match="symbolic link"):
        read_capped(tmp_path / "l.py", 100)
    with pytest.raises(ReadError, match="larger"):
        read_capped(target, 3)


def test_content_hash_follows_the_files(tmp_path, course):
    folder = tmp_path / "cy"
    folder.mkdir()
    (folder / "01_loop_average.py").write_text("a = 1\n")
    first = collect_student(course, folder).content_hash()
    assert collect_student(course, folder).content_hash() == first
    (folder / "01_loop_average.py").write_text("a = 2\n")
    assert collect_student(course, folder).content_hash() != first
    again = Collected.from_json(json.loads(json.dumps(collect_student(course, folder).to_json())))
    assert again.content_hash() == collect_student(course, folder).content_hash()


# ───────────────────────────── notebooks ─────────────────────────────

NB_CELLS = [
    ("markdown", "# my attention notebook"),
    ("code", "%matplotlib inline\nimport torch\nimport matplotlib.pyplot as plt\nfrom torch import nn"),
    ("code", "x = load_data('train.txt')  # only works on my laptop"),
    ("code", "def load_data(path):\n    return open(path).read()"),
    (
        "code",
        "def causal_mean_loop(x):\n    B, T, C = x.shape\n    out = torch.zeros_like(x)\n"
        "    for b in range(B):\n        for t in range(T):\n            out[b, t] = x[b, :t + 1].mean(0)\n"
        "    return out\nprint(causal_mean_loop(x))",
    ),
    (
        "code",
        "# stage: tril_average\ndef _lower(T, device=None, dtype=None):\n"
        "    return torch.tril(torch.ones(T, T, device=device, dtype=dtype))",
    ),
    (
        "code",
        "def causal_mean_weights(T, *, device=None, dtype=None):\n    w = _lower(T, device, dtype)\n"
        "    return w / w.sum(-1, keepdim=True)\n\ndef causal_mean_matmul(x):\n"
        "    return causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype) @ x",
    ),
    ("code", "plt.imshow(causal_mean_weights(5))\ncausal_mean_weights?\n!nvidia-smi"),
    ("code", "def causal_mask(T, *, device=None):\n    return torch.ones(T, T, dtype=torch.bool).tril(\n"),  # broken
    ("code", "from autograder.inprocess import nbgrader_public\nnbgrader_public('loop_average')"),
]


def test_a_notebook_is_sliced_into_runnable_stage_sources(course):
    import torch

    cells = notebook_cells(notebook(NB_CELLS).encode(), "nb.ipynb")
    sliced = slice_notebook(cells, list(course.stages[:4]), "nb.ipynb")
    loop, why = sliced["loop_average"]
    assert why == "" and loop is not None
    assert "matplotlib" not in loop and "load_data" not in loop and "print(" not in loop  # demo code left out
    ns = run_source(loop)
    x = torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert torch.allclose(ns["causal_mean_loop"](x), torch.cumsum(x, 1) / torch.arange(1, 5).view(1, 4, 1))
    tril, _ = sliced["tril_average"]
    assert "_lower" in tril and "plt" not in tril  # the helper comes along (marker and dependency)
    ns = run_source(tril)
    assert torch.allclose(ns["causal_mean_weights"](3).sum(-1), torch.ones(3))
    source, why = sliced["softmax_average"]
    assert source is None and "does not parse" in why and "code cell 8" in why  # markdown cells not counted
    source, why = sliced["dot_product_attention"]
    assert source is None and "defines none of" in why


def test_the_last_definition_wins_and_later_patches_come_along(course):
    cells = [
        "import torch",
        "def causal_mean_loop(x):\n    raise NotImplementedError",
        "def causal_mean_loop(x):\n    return x.cumsum(-2) / torch.arange(1, x.shape[-2] + 1).unsqueeze(-1)",
    ]
    source, _ = slice_notebook(cells, [course.stage("loop_average")], "nb.ipynb")["loop_average"]
    assert "NotImplementedError" not in source
    cells = [
        "import torch\nfrom torch import nn",
        "class SelfAttentionParams(nn.Module):\n    pass",
        "def _forward(self, x):\n    return x",
        "SelfAttentionParams.forward = _forward",
    ]
    source, _ = slice_notebook(cells, [course.stage("self_attention")], "nb.ipynb")["self_attention"]
    assert run_source(source)["SelfAttentionParams"].forward.__name__ == "_forward"


def test_one_notebook_per_student_and_malformed_notebooks(tmp_path, course):
    good = tmp_path / "dee"
    good.mkdir()
    (good / "attention.ipynb").write_text(notebook(NB_CELLS))
    (good / "notes.txt").write_text("hello")
    sub = collect_student(course, good)
    assert sub.layout == "notebook"
    assert set(sub.sources) == {"loop_average", "tril_average"}
    assert sub.sources["loop_average"][0] == "attention.ipynb#loop_average"
    assert "does not parse" in sub.problems["softmax_average"]

    bad = tmp_path / "eve"
    bad.mkdir()
    (bad / "attention.ipynb").write_text('{"cells": [')  # cut off while saving
    (bad / "01_loop_average.py").write_text(solution_body("01_loop_average.py"))
    sub = collect_student(course, bad)
    assert set(sub.sources) == {"loop_average"}  # the .py file still counts
    for stage in course.stages[1:]:
        assert "not a readable notebook" in sub.problems[stage.key]
    assert any("not a readable notebook" in n for n in sub.notes)

    two = tmp_path / "fin"
    two.mkdir()
    (two / "a.ipynb").write_text(notebook(NB_CELLS))
    (two / "b.ipynb").write_text(notebook(NB_CELLS))
    sub = collect_student(course, two)
    assert not sub.sources and "found 2 notebooks" in sub.problems["loop_average"]


def test_per_stage_notebooks_and_nbgrader_layout(tmp_path, course):
    cls = tmp_path / "course"
    for student in ("gil", "hal"):
        folder = cls / "submitted" / student / "attention"
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text("2026-01-01 10:00:00")
        (folder / "01_loop_average.ipynb").write_text(
            notebook(
                [
                    ("markdown", "## Stage 1"),
                    ("code", solution_body("01_loop_average.py")),
                    ("code", "from autograder.inprocess import nbgrader_public\nnbgrader_public('loop_average')"),
                ]
            )
        )
    (cls / "submitted" / "hal" / "attention" / "02_tril_average.ipynb").write_text("not json")
    (cls / "gradebook.db").write_text("")
    listing = collect_class(course, cls)
    assert listing.layout == "nbgrader"
    assert [s.student for s in listing.submissions] == ["gil", "hal"]
    gil, hal = listing.submissions
    assert set(gil.sources) == {"loop_average"} and gil.sources["loop_average"][0] == "01_loop_average.ipynb"
    assert "nbgrader_public" not in gil.sources["loop_average"][1]
    assert not gil.notes  # timestamp.txt is nbgrader's own: not worth a note
    assert "02_tril_average.ipynb is not a readable notebook" in hal.problems["tril_average"]


def test_class_listing_skips_what_is_not_a_student(tmp_path, course):
    cls = tmp_path / "cls"
    for name in ("zoe", "amy", ".git", "__pycache__", "report.html"):
        (cls / name).mkdir(parents=True)
    os.symlink(SOL, cls / "linked")
    (cls / "README.md").write_text("class of 2026")
    out = cls / "results"
    out.mkdir()
    listing = collect_class(course, cls, exclude=[out])
    assert [s.student for s in listing.submissions] == ["amy", "zoe"]
    skipped = dict(listing.skipped)
    assert "symbolic link" in skipped["linked"] and "report.html" in skipped
    assert "README.md" not in skipped  # loose files in a class folder are simply not students


def test_the_bundled_example_class_collects_as_described(course):
    core = {s.key for s in course.stages if s.track == "core"}  # the example class did the eight core stages
    listing = collect_class(course, ROOT / "examples" / "class")
    by = {s.student: s for s in listing.submissions}
    assert 10 <= len(by) <= 14
    assert set(by["ada"].sources) == core
    assert by["chen"].problems["causal_attention"].startswith("file missing")
    assert by["hana"].layout == "notebook" and "variance_scaling" in by["hana"].problems
    assert set(by["hana"].sources) == core - {"variance_scaling"}
    assert by["ivan"].sources["loop_average"][0] == "01_loop_average.ipynb"
    assert "symbolic link" in by["jo"].problems["softmax_average"]
    assert any("conftest.py" in n and "torch.py" in n for n in by["jo"].notes)


def test_a_clone_of_the_student_release_is_read_from_its_exercises_folder(tmp_path, course):
    repo = tmp_path / "class" / "zoe"
    (repo / "exercises").mkdir(parents=True)
    (repo / "exercises" / "01_loop_average.py").write_text(solution_body("01_loop_average.py"))
    (repo / "exercises" / "conftest.py").write_text("raise SystemExit('planted')\n")
    (repo / "02_tril_average.py").write_text(solution_body("02_tril_average.py"))  # the top folder wins
    (repo / "exercises" / "02_tril_average.py").write_text("broken = \n")
    (sub,) = collect_class(course, tmp_path / "class").submissions
    assert sub.sources["loop_average"][1] == solution_body("01_loop_average.py")
    assert sub.sources["tril_average"][1] == solution_body("02_tril_average.py")
    assert sub.problems["softmax_average"] == "file missing: 03_softmax_average.py"


def test_files_inside_a_wrapper_folder_are_found(tmp_path, course):
    """A downloaded zip unpacks into a folder of its own (alice/attention-main/...): the files are read there,
    with a note; a folder with several sub-folders and no stage file says which folders it holds."""
    cls = tmp_path / "class"
    inner = cls / "alice" / "attention-main"
    inner.mkdir(parents=True)
    (cls / "alice" / "__MACOSX").mkdir()  # what macOS adds to a zip
    (inner / "01_loop_average.py").write_text(solution_body("01_loop_average.py"))
    deep = cls / "bob" / "download" / "attention-main" / "exercises"
    deep.mkdir(parents=True)
    (deep / "02_tril_average.py").write_text(solution_body("02_tril_average.py"))
    for name in ("try1", "try2"):
        (cls / "cara" / name).mkdir(parents=True)
        (cls / "cara" / name / "01_loop_average.py").write_text(solution_body("01_loop_average.py"))
    by = {s.student: s for s in collect_class(course, cls).submissions}
    assert by["alice"].sources["loop_average"] == ("01_loop_average.py", solution_body("01_loop_average.py"))
    assert by["alice"].notes[0] == "stage files read from the folder attention-main/"
    assert set(by["bob"].sources) == {"tril_average"}
    assert by["bob"].notes[0] == "stage files read from the folder download/attention-main/"
    assert not by["cara"].sources
    assert any("no stage file" in n and "try1/, try2/" in n for n in by["cara"].notes)


def test_an_output_folder_inside_the_class_folder_is_never_a_student(tmp_path, course):
    cls = tmp_path / "class"
    (cls / "ann").mkdir(parents=True)
    (cls / "ann" / "01_loop_average.py").write_text(solution_body("01_loop_average.py"))
    old = cls / "results-week1"  # an earlier run's --out, not the current one
    (old / "ann").mkdir(parents=True)
    (old / "run.json").write_text(json.dumps({"format": 1, "course": "attention", "seed": 3}))
    (old / "ann" / "result.json").write_text("{}")
    (cls / "dan").mkdir()
    (cls / "dan" / "run.json").write_text("my own notes")  # a student's file of that name is not a marker
    listing = collect_class(course, cls, exclude=[cls / "results-week2"])
    assert [s.student for s in listing.submissions] == ["ann", "dan"]
    assert "output folder" in dict(listing.skipped)["results-week1"]
