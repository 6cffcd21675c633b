"""MISTAKE: off-by-one mask (one future step visible: tril(diagonal=1), or mask rows one step late)

Mask rows offset+1 .. offset+T_new (one step late).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        visible = self.mask[offset:offset + T_new, :T_total]  # the mask rows of the new positions',
        '        visible = self.mask[offset + 1:offset + 1 + T_new, :T_total]',
    ),
]
