"""MISTAKE: mask not sliced to T (use self.mask[:T, :T])

Uses the whole (context_length, context_length) mask, which only fits when T == context_length.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n',
        '        scores = scores.masked_fill(~self.mask, float("-inf"))\n',
    ),
]
