"""MISTAKE: scaled by sqrt(d_out) / n_heads instead of sqrt(d_out / n_heads) (the head size's square root: divide inside the sqrt)

CrossAttention: the head size's square root written sqrt(d_out) / n_heads instead of sqrt(d_out / n_heads).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(hs)  # (B, nh, T_q, T_k)\n',
        '        scores = q @ k.transpose(-2, -1) / (math.sqrt(self.out_proj.out_features) / self.n_heads)  # (B, nh, T_q, T_k)\n',
    ),
]
