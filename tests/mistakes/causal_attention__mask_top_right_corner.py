"""MISTAKE: mask sliced from the buffer's top-right corner (self.mask[:T, -T:]): where T < context_length it hides the step itself and earlier steps too; slice the top-left corner, self.mask[:T, :T]

Slices the (context_length, context_length) buffer with self.mask[:T, -T:]: its last T columns. Where T equals
context_length that is the whole buffer and the answer is right; for shorter sequences query t sees only keys up
to t - (context_length - T), and the first rows see nothing at all (NaN).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n',
        '        scores = scores.masked_fill(~self.mask[:T, -T:], float("-inf"))\n',
    ),
]
