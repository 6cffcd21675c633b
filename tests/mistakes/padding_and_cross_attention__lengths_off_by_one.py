"""MISTAKE: off by one: position lengths[b] counted as a real token (s <= lengths[b] instead of s < lengths[b])

Positions are counted from 0, so a sequence of length n holds positions 0..n-1; `<=` adds the first padding.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return positions[None, :] < lengths[:, None]  # (1, T) < (B, 1) -> (B, T)\n',
        '    return positions[None, :] <= lengths[:, None]  # (1, T) <= (B, 1) -> (B, T)\n',
    ),
]
