"""MISTAKE: scaled by sqrt(block_size) instead of sqrt(hs)

The scale is taken from the block size, not from the queries' feature size. The hidden draws never make the two
equal, so the mistake costs the same checks whatever the student's seed.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scale = 1.0 / math.sqrt(q.shape[-1])\n',
        '    scale = 1.0 / math.sqrt(block_size)\n',
    ),
]
