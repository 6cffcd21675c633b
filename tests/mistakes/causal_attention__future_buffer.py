"""MISTAKE: mask buffer True on the future (s > t) instead of on the visible steps

Stores the future in the buffer, the book's ``triu(diagonal=1)``, and masks where it is True: the attention is
causal and every value right, but the buffer is not the one the docstring asks for.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        mask = torch.ones(context_length, context_length, dtype=torch.bool).tril()\n",
        "        mask = torch.ones(context_length, context_length, dtype=torch.bool).triu(diagonal=1)\n",
    ),
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n',
        '        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))\n',
    ),
]
