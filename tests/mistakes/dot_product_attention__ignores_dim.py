"""MISTAKE: dim argument ignored (softmax always over the last dim)

A copy of the stage 4 solution with one bug: softmax_stable always works on the last dim, whatever dim says.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return e / e.sum(dim=dim, keepdim=True)\n',
        '    return e / e.sum(dim=-1, keepdim=True)\n',
    ),
    (
        '    shifted = x - x.amax(dim=dim, keepdim=True)  # (..., n) - (..., 1): largest entry is now 0\n',
        '    shifted = x - x.amax(dim=-1, keepdim=True)  # (..., n) - (..., 1): largest entry is now 0\n',
    ),
]
