"""MISTAKE: normalised over the whole tensor instead of along dim
softmax_naive divides by e.sum(), the total of every entry: the whole tensor sums to 1, not each slice along dim.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return e / e.sum(dim=dim, keepdim=True)  # (..., n) / (..., 1)\n',
        '    return e / e.sum()  # the total of every entry\n',
    ),
]
