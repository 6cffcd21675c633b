"""MISTAKE: no ValueError past max_len

A copy of the stage 11 solution with one bug: append refuses new positions only when the cache is already full,
so a cache of 4 holding 2 accepts 3 more and ends up holding 5.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        if len(self) + T_new > self.max_len:\n',
        '        if len(self) >= self.max_len:\n',
    ),
]
