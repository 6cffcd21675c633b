"""MISTAKE: dropout on the output (instead of the attention weights)

CrossAttention applies self.dropout to the heads' outputs instead of the attention weights."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "out = self.dropout(weights) @ v  # (B, nh, T_q, hs)",
        "out = self.dropout(weights @ v)",
    ),
]
