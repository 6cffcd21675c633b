"""MISTAKE: divided by d_k ** 1/2, which is d_k / 2 (** binds tighter than /)

A copy of the stage 5 solution with one bug: `d_k ** 1/2` is (d_k ** 1) / 2 in Python, not a square root.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
        '    return q @ k.transpose(-2, -1) / (d_k ** 1/2)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
    ),
]
