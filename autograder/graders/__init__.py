"""The graders: pytest modules, one public and one hidden per stage, run by :mod:`autograder.runner`.

``public/`` checks use fixed inputs (their expected values can be snapshotted for student releases);
``hidden/`` checks use inputs drawn from the seed recorded with each result, and properties (causality,
op counts, forbidden APIs, statistics, gradients) that need the reference code.
"""
