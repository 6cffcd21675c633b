"""MISTAKE: off-by-one mask (torch.tril(..., diagonal=1)): each step averages one future step too

Torch.tril(ones, diagonal=1): one future step leaks into each average.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        'tril = torch.tril(ones)',
        'tril = torch.tril(ones, diagonal=1)',
    ),
]
