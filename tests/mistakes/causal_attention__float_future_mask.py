"""MISTAKE: none

Keeps the mask as a float tensor with 1 on the future (triu(diagonal=1)), converted to bool in forward: the
outputs are right, but the buffer is not the bool "True where s <= t" mask the docstring asks for.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        mask = torch.ones(context_length, context_length, dtype=torch.bool).tril()\n',
        '        mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)\n',
    ),
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n',
        '        scores = scores.masked_fill(self.mask.bool()[:T, :T], float("-inf"))\n',
    ),
]
