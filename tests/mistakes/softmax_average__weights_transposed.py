"""MISTAKE: none
causal_mean_softmax multiplies by weights.T: the weights are right, but the transposed table is upper triangular
with columns (not rows) summing to 1. No known mistake gives these numbers (the triu mask gives other ones).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return weights @ x  # (T, T) @ (B, T, C) -> (B, T, C)\n',
        '    return weights.T @ x  # (T, T) @ (B, T, C) -> (B, T, C)\n',
    ),
]
