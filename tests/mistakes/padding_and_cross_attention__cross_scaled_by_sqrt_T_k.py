"""MISTAKE: scaled by sqrt(T) instead of sqrt(d_k)

CrossAttention: divided by sqrt(T_k) (context length).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(hs)  # (B, nh, T_q, T_k)',
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(T_k)  # (B, nh, T_q, T_k)',
    ),
]
