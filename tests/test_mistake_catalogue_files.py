"""The catalogue's files stay in step with the solutions they are derived from."""

from __future__ import annotations

import ast

import pytest

from autograder.instructor.catalogue import mistake_files, mistake_source

FILES = mistake_files()


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_catalogue_file_gives_a_parseable_learner_file(path):
    source = mistake_source(path)  # raises when an edit no longer fits its solution
    tree = ast.parse(source)
    assert (ast.get_docstring(tree) or "").startswith("MISTAKE:")


def test_a_stale_edit_fails_loudly(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "02_tril_average.py").write_text('"""Stage 2."""\nx = 1\n')
    bad = tmp_path / "tril_average__stale.py"
    bad.write_text('"""MISTAKE: none"""\nEDITS = [("y = 2\\n", "y = 3\\n")]\n')
    with pytest.raises(ValueError, match=r"edit 1 expects its old text exactly once .* found it 0 times"):
        mistake_source(bad, tmp_path)
    good = tmp_path / "tril_average__ok.py"
    good.write_text('"""MISTAKE: none"""\nEDITS = [("x = 1\\n", "x = 2\\n")]\n')
    assert mistake_source(good, tmp_path) == '"""MISTAKE: none\n\nStage 2."""\nx = 2\n'
