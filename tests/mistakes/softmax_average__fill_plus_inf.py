"""MISTAKE: none
The future filled with +inf instead of -inf: exp(inf) is inf, and inf / inf is NaN in every row with a future.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = scores.masked_fill(future, float("-inf"))\n',
        '    scores = scores.masked_fill(future, float("inf"))\n',
    ),
]
