"""MISTAKE: keys cached but not values

Appends the new keys to the cached ones but keeps only the newest values.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            self.values = torch.cat([self.values, v_new], dim=-2)\n',
        '            self.values = v_new\n',
    ),
]
