"""MISTAKE: mask sliced from the buffer's bottom-left corner (self.mask[-T:, :T]): where T < context_length future steps are visible; slice the top-left corner, self.mask[:T, :T]

Slices the buffer with self.mask[-T:, :T]: its last T rows. Right where T equals context_length; for shorter
sequences query t also sees the next context_length - T steps.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n',
        '        scores = scores.masked_fill(~self.mask[-T:, :T], float("-inf"))\n',
    ),
]
