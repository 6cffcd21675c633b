"""The fixtures every grader module may ask for: ``student``, ``seed``, ``rng``, and ``submission`` (the one being
graded; ``device`` is a parameter set by the runner's plugin). Registered as a pytest plugin by
:func:`autograder.runner.grade`, whose :class:`~autograder.runner.GraderPlugin` puts itself in the config's
stash under :data:`GRADER`: the fixtures find it, the grader module's ``STAGE`` and the check's name through
``request``."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .runner import GraderPlugin

GRADER: pytest.StashKey[GraderPlugin] = pytest.StashKey()


def _grader(request: pytest.FixtureRequest) -> GraderPlugin:
    return request.config.stash[GRADER]


@pytest.fixture(scope="module")
def submission(request: pytest.FixtureRequest):
    """The submission whose checks are running: the runner runs the same collected checks for each in turn."""
    return _grader(request).current


@pytest.fixture(scope="module")
def student(request: pytest.FixtureRequest, submission):
    """The learner's file for this module's stage, behind a sandboxed proxy (a child process per submission
    and stage, shared by the stage's public and hidden modules)."""
    from .runner import _Missing

    plugin = _grader(request)
    stage = plugin.course.stage(request.module.STAGE)
    if stage.key not in submission.sources:
        yield _Missing(submission.problems.get(stage.key, f"file missing: {stage.file}"))
        return
    proxy = plugin.stage_proxy(submission, stage)
    try:
        yield proxy
    finally:
        plugin.release_proxy(submission, stage)


@pytest.fixture(scope="module")
def seed(request: pytest.FixtureRequest, submission) -> int:
    """The seed of this (run, student, stage): recorded with the result and printed with a failure, so that
    ``check --seed`` reproduces it."""
    return _grader(request).seed_of(submission.student, request.module.STAGE)


@pytest.fixture
def rng(request: pytest.FixtureRequest, seed):
    """A torch.Generator for this check, derived from ``seed`` and the check's name (without its parameters)."""
    import torch

    name = getattr(request.node, "originalname", request.node.name)
    salt = int.from_bytes(hashlib.sha256(name.encode()).digest()[:3], "big")
    return torch.Generator().manual_seed(seed ^ salt)
