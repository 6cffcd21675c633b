"""MISTAKE: x^T @ x instead of x @ x^T
attention_scores transposes the wrong factor: x^T @ x is the (C, C) table of feature correlations, not the (T, T)
table of position similarities.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return x @ x.transpose(-2, -1)  # (B, T, C) @ (B, C, T) -> (B, T, T)\n',
        '    return x.transpose(-2, -1) @ x  # (B, C, T) @ (B, T, C) -> (B, C, C)\n',
    ),
]
