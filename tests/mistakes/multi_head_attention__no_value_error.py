"""MISTAKE: no ValueError when d_out % n_heads != 0

Never checks that the heads divide d_out evenly.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        if d_out % n_heads != 0:\n            raise ValueError(\n                f"d_out ({d_out}) must be divisible by n_heads ({n_heads}): "\n                f"each head gets d_out // n_heads features"\n            )\n',
        '',
    ),
]
