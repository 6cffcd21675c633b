"""The oracle's known-mistake outputs are computed lazily from the inputs a check passed, kept by reference."""

from __future__ import annotations

import pytest
import torch

from autograder import oracle


def test_known_mistakes_are_the_variants_of_the_inputs_given():
    q, k = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(2, 5, 4, dtype=torch.float64)
    known = oracle.mistakes("scaled_scores", q, k)
    names = list(known)  # computed on first look
    assert names, "scaled_scores has known mistakes in the catalogue"
    raw = q @ k.transpose(-2, -1)
    assert any(torch.allclose(known[n], raw) for n in names)  # "no scale" is among them
    assert torch.allclose(oracle.expected("scaled_scores", q, k), raw / 2.0)


def test_a_check_that_changes_its_inputs_in_place_is_stopped():
    """The inputs are not copied (that cost more than the rare variants): a check that modifies a tensor after
    asking for its known mistakes, and then reads one, gets an error instead of variants of other inputs."""
    q, k = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(2, 3, 4, dtype=torch.float64)
    known = oracle.mistakes("scaled_scores", q, k)
    q.mul_(2.0)
    with pytest.raises(RuntimeError, match="in place"):
        list(known)


def test_two_oracle_modules_cannot_define_the_same_reference():
    import types

    first = types.ModuleType("oracles.first")
    first.EXPECTED = {"causal_mean_loop": lambda x: x}
    second = types.ModuleType("oracles.second")
    second.EXPECTED = {"other": lambda x: x, "causal_mean_loop": lambda x: -x}
    with pytest.raises(
        oracle.OracleError,
        match=r"'causal_mean_loop' is defined twice: in oracles.first "
        r"and in oracles.second",
    ):
        oracle.build_registry([first, second])
    assert set(oracle.build_registry([first])) == {"causal_mean_loop"}


def test_the_course_oracles_register_without_clashes():
    assert {"causal_mean_loop", "scaled_scores"} <= set(oracle.known_mistake_names())
