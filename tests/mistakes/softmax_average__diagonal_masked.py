"""MISTAKE: diagonal masked too (a step cannot see itself)

A copy of the stage 3 solution with one bug: the mask uses tril(-1), so a step may not look at itself;
row 0 has nothing left to look at and becomes NaN.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)\n',
        '    return torch.ones(T, T, dtype=torch.bool, device=device).tril(-1)  # (T, T)\n',
    ),
]
