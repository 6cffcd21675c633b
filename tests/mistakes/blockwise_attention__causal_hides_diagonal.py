"""MISTAKE: diagonal masked too (a step cannot see itself)

The causal mask inside a block compares cols >= rows, so each query also hides its own key.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '                scores = scores.masked_fill(cols > rows, float("-inf"))\n',
        '                scores = scores.masked_fill(cols >= rows, float("-inf"))\n',
    ),
]
