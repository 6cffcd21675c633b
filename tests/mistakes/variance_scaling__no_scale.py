"""MISTAKE: missing scale (not divided by sqrt(d_k); d_k ** (1 // 2) is d_k ** 0 = 1: use math.sqrt(d_k))

A copy of the stage 5 solution with one bug: the scores are not scaled at all.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
        '    return q @ k.transpose(-2, -1)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
    ),
]
