"""MISTAKE: merge without transpose ((B, nh, T, hs) viewed straight as (B, T, C))

CrossAttention: merge heads with out.reshape(B, T_q, d) without transpose.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        out = out.transpose(1, 2).reshape(B, T_q, nh * hs)  # (B, T_q, d_out)',
        '        out = out.reshape(B, T_q, nh * hs)  # (B, T_q, d_out)',
    ),
]
