"""MISTAKE: scaled by sqrt(hs_v) (the value size) instead of sqrt(hs)

masked_attention divides the scores by the square root of the values' size instead of the queries' and keys'.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n',
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])  # (B, T_q, T_k)\n',
    ),
]
