"""MISTAKE: divided by math.isqrt(d_k), the square root rounded down to a whole number

A copy of the stage 5 solution with one bug: math.isqrt gives the integer square root, exact only when d_k is a
perfect square. With d_k = 6 it is 2, which once made a query length of 4 look like the cause (sqrt(T)).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
        '    return q @ k.transpose(-2, -1) / math.isqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
    ),
]
