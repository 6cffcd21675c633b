"""MISTAKE: diagonal masked too (a step cannot see itself)
The mask compares positions with < instead of <=: True where s < t, so a step may not look at itself and row 0
sees nothing (NaN after the softmax).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)\n',
        '    s = torch.arange(T, device=device)\n    return s[None, :] < s[:, None]  # (T, T)\n',
    ),
]
