"""MISTAKE: none
Divides by math.ceil(sqrt(d_k)): with d_k = 6 that is 3 = d_k / 2, and with d_k = 8 it is 3 = T_q, so it must
not be named "d_k ** 1/2" or "divided by T".
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
        '    return q @ k.transpose(-2, -1) / math.ceil(math.sqrt(d_k))  # a whole-number scale\n',
    ),
]
