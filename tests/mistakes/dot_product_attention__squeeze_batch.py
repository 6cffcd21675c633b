"""MISTAKE: none

Drops the batch dim with .squeeze(0) "to handle one sequence": a batch of one (1, T, C) comes back as (T, T).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return x @ x.transpose(-2, -1)  # (B, T, C) @ (B, C, T) -> (B, T, T)\n',
        '    x = x.squeeze(0)\n    return x @ x.transpose(-2, -1)  # (B, T, C) @ (B, C, T) -> (B, T, T)\n',
    ),
]
