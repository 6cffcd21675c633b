"""MISTAKE: key_padding_mask broadcast over the heads instead of the batch (mask[:, None, :]: use mask[:, None, None, :])

CrossAttention: key_padding_mask[:, None, :] (B, 1, T_k) against (B, nh, T_q, T_k) scores.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            visible = key_padding_mask.reshape(B, 1, 1, T_k)  # the same keys hidden in every head',
        '            visible = key_padding_mask[:, None, :]',
    ),
]
