"""MISTAKE: no mask, or one filled with 0 instead of -inf (zero scores stay zero: the future gets the weight of the past)

A copy of the stage 3 solution with one bug: the future is filled with 0 instead of -inf, and exp(0) = 1
gives the future the same weight as the past.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = scores.masked_fill(future, float("-inf"))\n',
        '    scores = scores.masked_fill(future, 0.0)\n',
    ),
]
