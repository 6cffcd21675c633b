"""MISTAKE: heads split without transpose (view(B, nh, T, hs))

Reshapes (B, T, C) straight to (B, nh, T, hs), so each head gets a block of rows of the flattened (T, C) array instead of its own features at every step.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    x = x.reshape(*lead, T, n_heads, C // n_heads)  # (B, T, nh, hs), a view when possible\n    return x.transpose(-3, -2)  # (B, nh, T, hs)\n',
        '    return x.reshape(*lead, n_heads, T, C // n_heads)  # (B, nh, T, hs)\n',
    ),
]
