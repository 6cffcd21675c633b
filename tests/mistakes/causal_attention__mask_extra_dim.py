"""MISTAKE: none

The mask is sliced to T, then given an extra dimension ((T, T, 1)), so that it no longer lines up with the scores:
an error whose cause is that dimension, not the slicing (no "mask not sliced" label).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n',
        '        scores = scores.masked_fill(~self.mask[:T, :T].unsqueeze(-1), float("-inf"))\n',
    ),
]
