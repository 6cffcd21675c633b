"""MISTAKE: x.T on batched input (reverses every dim; use x.transpose(-2, -1))

A copy of the stage 4 solution with one bug: attention_scores uses x.T, which transposes a single (T, C)
sequence correctly but reverses all three dims of a (B, T, C) batch.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return x @ x.transpose(-2, -1)  # (B, T, C) @ (B, C, T) -> (B, T, T)\n',
        '    return x @ x.T  # (T, C) @ (C, T) -> (T, T)\n',
    ),
]
