"""MISTAKE: scaled by sqrt(d_out) instead of sqrt(head_size)

CrossAttention scales every head's scores by the full width instead of the head size.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(hs)  # (B, nh, T_q, T_k)\n',
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(nh * hs)  # (B, nh, T_q, T_k)\n',
    ),
]
