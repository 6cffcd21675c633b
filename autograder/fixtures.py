"""The fixtures every grader module may ask for: ``student``, ``seed``, ``rng``, and ``submission`` (the one being
graded; ``device`` is a parameter set by the runner's plugin). Registered as a pytest plugin by
:func:`autograder.runner.grade`."""

from __future__ import annotations

import hashlib

import pytest


# The check about to run, set by the runner's plugin before each one's fixtures: its name (which salts ``rng``),
# its module's STAGE and the plugin. The fixtures read it here rather than through ``request``: pytest builds a
# fixture definition (and inspects a signature) for ``request`` in every check whose fixtures ask for it, once
# per check, which was a measurable share of the judge's time. A module-scoped fixture is set up during the
# first check of its module, so it sees that module's stage.
CURRENT = {"name": "", "stage": None, "plugin": None}


@pytest.fixture(scope="module")
def submission():
    """The submission whose checks are running: the runner runs the same collected checks for each in turn."""
    return CURRENT["plugin"].current


@pytest.fixture(scope="module")
def student(submission):
    """The learner's file for this module's stage, behind a sandboxed proxy (a fresh child process per
    submission and stage, shared by the stage's public and hidden modules)."""
    from .runner import _Missing

    plugin = CURRENT["plugin"]
    stage = plugin.course.stage(CURRENT["stage"])
    if stage.key not in submission.sources:
        yield _Missing(submission.problems.get(stage.key, f"file missing: {stage.file}"))
        return
    proxy = plugin.stage_proxy(submission, stage)
    try:
        yield proxy
    finally:
        plugin.release_proxy(submission, stage)


@pytest.fixture(scope="module")
def seed(submission) -> int:
    """The seed of this (run, student, stage): recorded with the result, so a failure can be reproduced."""
    from .runner import stage_seed

    return stage_seed(CURRENT["plugin"].base_seed, submission.student, CURRENT["stage"])


@pytest.fixture
def rng(seed):
    """A torch.Generator for this check, derived from ``seed`` and the check's name."""
    import torch

    salt = int.from_bytes(hashlib.sha256(CURRENT["name"].encode()).digest()[:3], "big")
    return torch.Generator().manual_seed(seed ^ salt)
