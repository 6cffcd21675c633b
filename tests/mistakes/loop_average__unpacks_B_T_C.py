"""MISTAKE: none

Unpacks B, T, C = x.shape: right for (B, T, C), an error for the (..., T, C) inputs the docstring allows.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    T, C = x.shape[-2:]\n    seqs = x.reshape(-1, T, C)  # (B, T, C): any leading dims folded into one batch dim\n',
        '    B, T, C = x.shape\n    seqs = x\n',
    ),
]
