"""MISTAKE: none

A copy of the stage 5 solution with one bug: the scores are divided by their own standard deviation instead of
sqrt(d_k). For unit-Gaussian q and k that standard deviation is about sqrt(d_k), so the variance comes out as 1 and
the softmax is spread out, but the scale now depends on the data: it is wrong for any other q and k.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
        '    s = q @ k.transpose(-2, -1)\n    return s / s.std()\n',
    ),
]
