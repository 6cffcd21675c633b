"""MISTAKE: scaled by head_size instead of sqrt(head_size)

CrossAttention: divided by hs instead of sqrt(hs).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(hs)  # (B, nh, T_q, T_k)',
        '        scores = q @ k.transpose(-2, -1) / hs  # (B, nh, T_q, T_k)',
    ),
]
