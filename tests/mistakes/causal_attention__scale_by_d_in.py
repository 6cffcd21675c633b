"""MISTAKE: scaled by sqrt(d_in) instead of sqrt(head_size)

A copy of the stage 7 solution with one bug: the module divides its scores by the square root of the input's
width, not of the head size. It lost twelve checks without a name for what went wrong.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)\n',
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])  # (B, T, T)\n',
    ),
]
