"""MISTAKE: no mask, or one filled with 0 instead of -inf (zero scores stay zero: the future gets the weight of the past)
masked_fill returns a new tensor, and the result is thrown away: the scores stay all zeros, so the softmax is
uniform over the whole row, exactly as with no mask.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = scores.masked_fill(future, float("-inf"))\n',
        '    scores.masked_fill(future, float("-inf"))  # the result is dropped\n',
    ),
]
