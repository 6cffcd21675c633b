"""MISTAKE: divided by sqrt(T) instead of sqrt(d_k)

A copy of the stage 5 solution with one bug: d_k is read from the wrong dim (q.shape[-2] is T_q).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    d_k = q.shape[-1]\n',
        '    d_k = q.shape[-2]\n',
    ),
]
