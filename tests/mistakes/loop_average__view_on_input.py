"""MISTAKE: none

Folds the leading dims with ``x.view(-1, T, C)``: fine for a contiguous input, an error for a non-contiguous one
whose leading dims cannot be merged without a copy (``reshape`` copies when it must).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    seqs = x.reshape(-1, T, C)  # (B, T, C): any leading dims folded into one batch dim\n",
        "    seqs = x.view(-1, T, C)  # (B, T, C): any leading dims folded into one batch dim\n",
    ),
]
