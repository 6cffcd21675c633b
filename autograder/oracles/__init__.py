"""Trusted reference implementations and known-mistake variants, one module per stage.

Each module defines ``EXPECTED = {function name: reference}`` and ``MISTAKES = {function name: {mistake name:
variant}}``. They run in the judge only, on CPU float64 inputs (see :mod:`autograder.oracle`), and are never
shipped in a student release.
"""

import torch


def distinct(reference, variants: dict) -> dict:
    """Each variant of ``variants`` (mistake name -> function), made to raise (and so be skipped) wherever it gives
    ``reference``'s answer: a mistake that changes nothing on an input (a maximum that never grows, a remainder
    that is empty, a cache that is never read again) explains no wrong answer there."""

    def wrap(fn):
        def variant(*args):
            out, want = fn(*args), reference(*args)
            if out.shape == want.shape and torch.allclose(out, want, rtol=1e-6, atol=1e-9, equal_nan=True):
                raise ValueError("the mistake changes nothing on this input")
            return out

        return variant

    return {name: wrap(fn) for name, fn in variants.items()}
