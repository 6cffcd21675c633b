"""MISTAKE: input modified in place
The queries are scaled in place (q /= sqrt(d_k)) before the product: the scores are right, but the caller's q is
changed.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
        '    q /= math.sqrt(d_k)\n    return q @ k.transpose(-2, -1)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
    ),
]
