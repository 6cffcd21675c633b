"""MISTAKE: causal offset of the new tokens ignored (mask rows 0.. instead of T_cached..)

Takes the mask's first rows for the new tokens, as if they were at positions 0..T_new - 1.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        visible = self.mask[offset:offset + T_new, :T_total]  # the mask rows of the new positions\n',
        '        visible = self.mask[:T_new, :T_total]\n',
    ),
]
