"""MISTAKE: no ValueError when d_out % n_heads != 0

Checks the head count with assert, which raises AssertionError (and disappears under python -O).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        if d_out % n_heads != 0:\n            raise ValueError(\n                f"d_out ({d_out}) must be divisible by n_heads ({n_heads}): "\n                f"each head gets d_out // n_heads features"\n            )\n',
        '        assert d_out % n_heads == 0, "d_out must be divisible by n_heads"\n',
    ),
]
