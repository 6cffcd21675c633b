"""MISTAKE: none

Converts the logits to float32 "for safety" and never converts back: every softmax_stable answer is float32,
whatever the input's dtype. The values are right; only the dtype is not the input's, a mistake that costs one
check of the stage, however many checks see the dtype.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    shifted = x - x.amax(dim=dim, keepdim=True)  # (..., n) - (..., 1): largest entry is now 0\n',
        '    x = x.float()\n    shifted = x - x.amax(dim=dim, keepdim=True)  # (..., n) - (..., 1): largest entry is now 0\n',
    ),
]
