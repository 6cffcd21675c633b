"""MISTAKE: none
Divides by round(sqrt(d_k)), a whole-number scale. With d_k = 8 that is 3, which is also T_q of a public input:
the answer must not be named "divided by T" there (nor anything else: round, math.ceil and math.isqrt coincide
on most sizes).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
        '    return q @ k.transpose(-2, -1) / round(math.sqrt(d_k))  # a whole-number scale\n',
    ),
]
