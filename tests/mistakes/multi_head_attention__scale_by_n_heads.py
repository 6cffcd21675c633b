"""MISTAKE: scaled by sqrt(n_heads) instead of sqrt(head_size)

A copy of the stage 8 solution with one bug: the scores are divided by the square root of the number of heads
(k.size(1) of the (B, nh, T, hs) keys). With one head it is no scale at all, with n_heads == d_in a division by
sqrt(d_in): there it was named as those, three different names for one line.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T, T)\n',
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(k.size(1))  # (B, nh, T, T)\n',
    ),
]
