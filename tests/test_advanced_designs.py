"""Other correct designs of stages 10 and 11 earn the checks that measure how the answer was computed: the bounds
are set from the work the stage asks for, not from the reference solution's own figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.checks import CheckFailed
from autograder.graders.public import test_blockwise_attention as blockwise
from autograder.graders.public import test_kv_cache as kv
from autograder.sandbox.proxy import LocalStudent

ROOT = Path(__file__).resolve().parent.parent


def student(path: str, *edits: tuple[str, str]) -> LocalStudent:
    source = (ROOT / "solutions" / path).read_text()
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    namespace: dict = {}
    exec(compile(source, path, "exec"), namespace)
    return LocalStudent(namespace)


def test_skipping_future_blocks_but_masking_every_block_visited_passes():
    masks_all = student(
        "10_blockwise_attention.py", ("            if causal and k1 - 1 > q0:", "            if causal:")
    )
    blockwise.test_causal_skips(masks_all)
    blockwise.test_memory(masks_all)


def test_not_skipping_fails_the_skip_check():
    no_skip = student(
        "10_blockwise_attention.py", ("        k_end = min(T_k, q1) if causal else T_k\n", "        k_end = T_k\n")
    )
    with pytest.raises(CheckFailed, match="skipping the others halves the work"):
        blockwise.test_causal_skips(no_skip)


PREALLOCATED = (
    (
        "        if self.keys is None or self.values is None:\n"
        "            self.keys, self.values = k_new, v_new\n"
        "        else:\n"
        "            self.keys = torch.cat([self.keys, k_new], dim=-2)  # time is dim -2\n"
        "            self.values = torch.cat([self.values, v_new], dim=-2)\n"
        "        return self.keys, self.values\n",
        "        n = len(self)\n"
        "        if self.keys is None or self.values is None:\n"
        "            self.keys = k_new.new_zeros(*k_new.shape[:-2], self.max_len, k_new.shape[-1])\n"
        "            self.values = v_new.new_zeros(*v_new.shape[:-2], self.max_len, v_new.shape[-1])\n"
        "        self.keys = self.keys.slice_scatter(k_new, dim=-2, start=n, end=n + T_new)\n"
        "        self.values = self.values.slice_scatter(v_new, dim=-2, start=n, end=n + T_new)\n"
        "        self.n = n + T_new\n"
        "        return self.keys[..., :n + T_new, :], self.values[..., :n + T_new, :]\n",
    ),
    ("        return 0 if self.keys is None else self.keys.shape[-2]\n", "        return getattr(self, 'n', 0)\n"),
    ("        self.keys = self.values = None\n", "        self.keys = self.values = None\n        self.n = 0\n"),
)


def test_a_cache_preallocated_to_max_len_passes_the_step_cost_check():
    preallocated = student("11_kv_cache.py", *PREALLOCATED)
    kv.test_step_cost(preallocated)
    kv.test_one_at_a_time(preallocated)
    kv.test_cache_contents(preallocated)
