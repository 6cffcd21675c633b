"""MISTAKE: upper instead of lower triangle (torch.triu, or the mask transposed)

A copy of the stage 3 solution with one bug: the mask is built with triu, so each step sees the future
and not the past.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)\n',
        '    return torch.ones(T, T, dtype=torch.bool, device=device).triu()  # (T, T)\n',
    ),
]
