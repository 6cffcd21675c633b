"""MISTAKE: scaled by sqrt(d_out) * n_heads (scores / sqrt(d_out) / n_heads) instead of sqrt(head_size)

The scores divided by sqrt(d_out), then by n_heads: a scale of sqrt(d_out) * n_heads.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T, T)\n',
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(self.W_query.out_features) / self.n_heads  # (B, nh, T, T)\n',
    ),
]
