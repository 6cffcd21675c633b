"""MISTAKE: none

merge_heads calls .view straight after the transpose, without .contiguous(): PyTorch refuses (view size is not
compatible with input tensor's size and stride) unless one head or one step makes the transpose a no-op.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return x.reshape(*lead, T, nh * hs)  # (B, T, C), copies into place\n',
        '    return x.view(*lead, T, nh * hs)  # (B, T, C)\n',
    ),
]
