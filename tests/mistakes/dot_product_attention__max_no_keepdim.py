"""MISTAKE: max without keepdim=True (a different shift per column)
softmax_stable takes amax(dim) without keepdim: the (..., ) maxima broadcast against the wrong axis (or do not fit).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    shifted = x - x.amax(dim=dim, keepdim=True)  # (..., n) - (..., 1): largest entry is now 0\n',
        '    shifted = x - x.amax(dim=dim)  # the maxima, without keepdim\n',
    ),
]
