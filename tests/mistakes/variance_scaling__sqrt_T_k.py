"""MISTAKE: divided by sqrt(T_k) instead of sqrt(d_k)
d_k read from the keys' second-to-last dim (k.shape[-2] is T_k, the number of keys).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    d_k = q.shape[-1]\n',
        '    d_k = k.shape[-2]\n',
    ),
]
