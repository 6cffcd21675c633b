"""Trusted reference implementations and known-mistake variants, one module per stage.

Each module defines ``EXPECTED = {function name: reference}`` and ``MISTAKES = {function name: {mistake name:
variant}}``. They run in the judge only, on CPU float64 inputs (see :mod:`autograder.oracle`), and are never
shipped in a student release.
"""
