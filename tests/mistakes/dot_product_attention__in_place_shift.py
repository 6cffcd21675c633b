"""MISTAKE: input modified in place

A copy of the stage 4 solution with one bug: softmax_stable subtracts the maximum in place (x -= ...),
changing the caller's logits.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    shifted = x - x.amax(dim=dim, keepdim=True)  # (..., n) - (..., 1): largest entry is now 0\n',
        '    x -= x.amax(dim=dim, keepdim=True)  # (..., n) - (..., 1): largest entry is now 0\n    shifted = x\n',
    ),
]
