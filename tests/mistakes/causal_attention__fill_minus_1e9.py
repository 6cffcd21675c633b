"""MISTAKE: none

Fills the future with -1e9 instead of -inf: the same weights in float32 and float64, but -1e9 does not fit in
float16 (its largest magnitude is 65504), so a float16 call fails.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = scores.masked_fill(~visible, float("-inf"))\n',
        '    scores = scores.masked_fill(~visible, -1e9)\n',
    ),
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n',
        '        scores = scores.masked_fill(~self.mask[:T, :T], -1e9)\n',
    ),
]
