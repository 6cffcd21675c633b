"""MISTAKE: input modified in place

A copy of the stage 3 solution with one bug: the average is written back into x with copy_, changing the
caller's tensor.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return weights @ x  # (T, T) @ (B, T, C) -> (B, T, C)\n',
        '    return x.copy_(weights @ x)  # (T, T) @ (B, T, C) -> (B, T, C), written into x\n',
    ),
]
