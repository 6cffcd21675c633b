"""MISTAKE: multiplied by sqrt(d_k) instead of divided

The scores are multiplied by sqrt(head_size) instead of divided by it.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T, T)\n',
        '        scores = q @ k.transpose(-2, -1) * math.sqrt(self.head_size)  # (B, nh, T, T)\n',
    ),
]
