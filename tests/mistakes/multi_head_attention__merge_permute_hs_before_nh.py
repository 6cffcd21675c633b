"""MISTAKE: none

merge_heads with permute(0, 2, 3, 1): (B, T, hs, nh) flattened, so the output features interleave the heads
(feature i of head h lands at i * nh + h) instead of putting each head's block side by side.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    x = x.transpose(-3, -2)  # (B, T, nh, hs), no longer contiguous\n'
        '    return x.reshape(*lead, T, nh * hs)  # (B, T, C), copies into place\n',
        '    x = x.movedim(-3, -1)  # permute(0, 2, 3, 1): (B, T, hs, nh)\n'
        '    return x.reshape(*lead, T, nh * hs)  # (B, T, C)\n',
    ),
]
