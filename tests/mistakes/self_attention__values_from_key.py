"""MISTAKE: none

Copy-paste slip: the values are projected with W_key (W_value is never used and gets no gradient).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        values = x @ self.W_value  # (B, T, d_out)\n',
        '        values = x @ self.W_key  # (B, T, d_out)\n',
    ),
    (
        '        values = self.W_value(x)  # (B, T, d_out)\n',
        '        values = self.W_key(x)  # (B, T, d_out)\n',
    ),
]
