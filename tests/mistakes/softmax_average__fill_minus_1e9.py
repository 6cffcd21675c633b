"""MISTAKE: none
The future filled with -1e9 instead of -inf: right in float32 and float64, but -1e9 does not fit float16, so
masked_fill raises there.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = scores.masked_fill(future, float("-inf"))\n',
        '    scores = scores.masked_fill(future, -1e9)\n',
    ),
]
