"""MISTAKE: weights @ scores instead of weights @ x

A copy of the stage 4 solution with one bug: the context multiplies the weights by the scores instead of
by the inputs, giving a (T, T) result instead of (T, C).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return weights @ x  # (B, T, T) @ (B, T, C) -> (B, T, C)\n',
        '    return weights @ attention_scores(x)  # (B, T, T) @ (B, T, T) -> (B, T, T)\n',
    ),
]
