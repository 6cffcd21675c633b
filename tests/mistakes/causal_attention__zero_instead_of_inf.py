"""MISTAKE: masked with 0 instead of -inf (the future still gets weight)

Fills the future scores with 0: exp(0) = 1, so the future keeps a weight.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n',
        '        scores = scores.masked_fill(~self.mask[:T, :T], 0.0)\n',
    ),
    (
        '    scores = scores.masked_fill(~visible, float("-inf"))\n',
        '    scores = scores.masked_fill(~visible, 0.0)\n',
    ),
]
