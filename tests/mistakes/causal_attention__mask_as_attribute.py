"""MISTAKE: mask not registered as a buffer

Keeps the mask as a plain attribute, which .to(device) does not move.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        self.register_buffer("mask", mask)  # (context_length, context_length), moves with .to()\n',
        '        self.mask = mask  # (context_length, context_length), moves with .to()\n',
    ),
]
