"""MISTAKE: none
softmax_stable divides by the maximum instead of subtracting it: a different function. On logits near +-1e4 of one
sign per row its answer is nearly uniform, as a sum normalisation's is there: that flat answer must not be named
"sum normalisation".
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    shifted = x - x.amax(dim=dim, keepdim=True)  # (..., n) - (..., 1): largest entry is now 0\n',
        '    shifted = x / x.amax(dim=dim, keepdim=True)  # (..., n) / (..., 1)\n',
    ),
]
