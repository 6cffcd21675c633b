"""MISTAKE: padding applied to the queries (rows) instead of the keys (columns)

CrossAttention reshapes the mask to (B, 1, T, 1), hiding the rows of padded queries, while every query still
reads the padded keys.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            visible = key_padding_mask.reshape(B, 1, 1, T_k)  # the same keys hidden in every head\n',
        '            visible = key_padding_mask.reshape(B, 1, T_k, 1)  # the padded positions\n',
    ),
]
