"""MISTAKE: keys and queries swapped (k @ q^T is the scores transposed: row t holds key t against every query); use q @ k.transpose(-2, -1)

Keys and queries swapped in every head: k @ q^T, the transposed scores.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T, T)\n',
        '        scores = k @ q.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T, T)\n',
    ),
]
