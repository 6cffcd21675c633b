"""MISTAKE: scores / d_k ** 1/2 is (scores / d_k) / 2, a division by 2 * d_k (** binds tighter than /)

A copy of the stage 5 solution with one bug: without brackets, `x / d_k ** 1/2` is `(x / d_k) / 2`. Where
T = 2 * d_k this once looked like a division by T and was named so.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
        '    return q @ k.transpose(-2, -1) / d_k ** 1/2  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
    ),
]
