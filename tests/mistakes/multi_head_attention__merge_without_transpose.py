"""MISTAKE: merge without transpose ((B, nh, T, hs) viewed straight as (B, T, C))

Reshapes (B, nh, T, hs) straight to (B, T, nh * hs), which mixes time steps and heads.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    x = x.transpose(-3, -2)  # (B, T, nh, hs), no longer contiguous\n    return x.reshape(*lead, T, nh * hs)  # (B, T, C), copies into place\n',
        '    return x.reshape(*lead, T, nh * hs)  # (B, T, C)\n',
    ),
]
