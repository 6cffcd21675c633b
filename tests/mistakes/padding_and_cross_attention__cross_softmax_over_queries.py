"""MISTAKE: softmax over the wrong dim (columns sum to 1, not rows)

CrossAttention, given a padding mask, normalises over the queries (dim=-2) instead of the context positions.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)\n',
        '            weights = torch.softmax(scores, dim=-2).masked_fill(~has_key, 0.0)\n',
    ),
]
