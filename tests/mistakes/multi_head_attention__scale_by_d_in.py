"""MISTAKE: scaled by sqrt(d_in) instead of sqrt(head_size)

A copy of the stage 8 solution with one bug: the scores are divided by the square root of the input's width.
Where a check has d_in == d_out this cannot be told from a division by sqrt(d_out), and was once named so.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T, T)\n',
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])  # (B, nh, T, T)\n',
    ),
]
