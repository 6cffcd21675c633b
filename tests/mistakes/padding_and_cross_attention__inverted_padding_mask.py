"""MISTAKE: padding mask inverted: True taken to mean 'ignore this key' (nn.MultiheadAttention's key_padding_mask convention); here True marks a real token to attend to

Hides the keys where the mask is True, as nn.MultiheadAttention's key_padding_mask would: the padding is attended
to and the real tokens are hidden.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        visible = visible & keys  # (B, T_q, T_k)\n',
        '        visible = visible & ~keys  # (B, T_q, T_k)\n',
    ),
    (
        '            visible = key_padding_mask.reshape(B, 1, 1, T_k)  # the same keys hidden in every head\n',
        '            visible = ~key_padding_mask.reshape(B, 1, 1, T_k)  # the same keys hidden in every head\n',
    ),
]
