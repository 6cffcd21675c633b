"""MISTAKE: sum without keepdim=True (divided by the wrong sums)

A copy of the stage 4 solution with one bug: softmax_naive sums without keepdim=True, so the sums
broadcast along the wrong axis (or the shapes do not fit at all).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return e / e.sum(dim=dim, keepdim=True)  # (..., n) / (..., 1)\n',
        '    return e / e.sum(dim=dim)  # (..., n) / (...)\n',
    ),
]
