"""MISTAKE: inverted mask (the future visible, the past hidden)

Passes the mask itself to masked_fill instead of its negation, hiding the visible steps and showing the future.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n',
        '        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))\n',
    ),
    (
        '    scores = scores.masked_fill(~visible, float("-inf"))\n',
        '    scores = scores.masked_fill(visible, float("-inf"))\n',
    ),
]
