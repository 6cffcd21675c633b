"""On a machine with an accelerator (CUDA, MPS), every file of tests/device_parity.py gets the same verdicts there
as on the CPU, and the correct ones full marks on both. CI machines have none: there this is skipped, and the
script is what a developer or an instructor with a GPU runs (``python tests/device_parity.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from autograder.runner import available_devices

ACCELERATORS = [d for d in available_devices() if d != "cpu"]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not ACCELERATORS, reason="no accelerator here (devices: cpu): nothing to compare"),
]


def test_every_verdict_is_the_same_on_every_device(capsys):
    spec = importlib.util.spec_from_file_location("device_parity", Path(__file__).with_name("device_parity.py"))
    parity = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(parity)
    code = parity.main([])
    assert code == 0, capsys.readouterr().out[-6000:]
