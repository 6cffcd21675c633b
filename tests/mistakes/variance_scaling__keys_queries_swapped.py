"""MISTAKE: keys and queries swapped (k @ q^T is the scores transposed: row t holds key t against every query); use q @ k.transpose(-2, -1)

Keys against queries: k @ q^T, the transposed scores (of shape (T_k, T_q) when the two lengths differ).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
        '    return k @ q.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
    ),
]
