"""MISTAKE: none

split_heads and merge_heads written for exactly one batch dim (B, T, C = x.shape with transpose(1, 2)): right for
(B, T, C), an error for the extra leading dims the stubs promise.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    *lead, T, C = x.shape\n'
        '    if C % n_heads',
        '    B, T, C = x.shape\n'
        '    if C % n_heads',
    ),
    (
        '    x = x.reshape(*lead, T, n_heads, C // n_heads)  # (B, T, nh, hs), a view when possible\n'
        '    return x.transpose(-3, -2)  # (B, nh, T, hs)\n',
        '    x = x.view(B, T, n_heads, C // n_heads)  # (B, T, nh, hs)\n'
        '    return x.transpose(1, 2)  # (B, nh, T, hs)\n',
    ),
    (
        '    *lead, nh, T, hs = x.shape\n'
        '    x = x.transpose(-3, -2)  # (B, T, nh, hs), no longer contiguous\n'
        '    return x.reshape(*lead, T, nh * hs)  # (B, T, C), copies into place\n',
        '    B, nh, T, hs = x.shape\n'
        '    x = x.transpose(1, 2)  # (B, T, nh, hs), no longer contiguous\n'
        '    return x.reshape(B, T, nh * hs)  # (B, T, C)\n',
    ),
]
