"""MISTAKE: diagonal excluded (torch.tril(..., diagonal=-1)): a step left out of its own average

Keeps only the steps strictly before t: ``torch.tril(ones, diagonal=-1)``, so row 0 averages nothing (0 / 0).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    tril = torch.tril(ones)  # (T, T), zeros above the diagonal\n",
        "    tril = torch.tril(ones, diagonal=-1)  # (T, T), zeros above the diagonal\n",
    ),
]
