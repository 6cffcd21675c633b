"""MISTAKE: scaled by d_k instead of sqrt(d_k)

Masked_attention: divided by hs instead of sqrt(hs).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)',
        '    scores = q @ k.transpose(-2, -1) / q.shape[-1]  # (B, T_q, T_k)',
    ),
]
