"""The fixtures every grader module may ask for: ``student``, ``seed``, ``rng`` (``submission`` and ``device``
are parameters set by the runner's plugin). Registered as a pytest plugin by :func:`autograder.runner.grade`."""

from __future__ import annotations

import hashlib

import pytest


def _plugin(request):
    from .runner import PLUGIN_KEY

    return request.config.stash[PLUGIN_KEY]


@pytest.fixture(scope="module")
def student(submission, request):
    """The learner's file for this module's stage, behind a sandboxed proxy (a fresh child process per
    submission and stage, shared by the stage's public and hidden modules)."""
    from .runner import _Missing

    plugin = _plugin(request)
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
def seed(submission, request) -> int:
    """The seed of this (run, student, stage): recorded with the result, so a failure can be reproduced."""
    from .runner import stage_seed

    return stage_seed(_plugin(request).base_seed, submission.student, request.module.STAGE)


@pytest.fixture
def rng(seed, request):
    """A torch.Generator for this check, derived from ``seed`` and the check's name."""
    import torch

    salt = int.from_bytes(hashlib.sha256(request.node.originalname.encode()).digest()[:3], "big")
    return torch.Generator().manual_seed(seed ^ salt)
