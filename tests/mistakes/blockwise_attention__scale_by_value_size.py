"""MISTAKE: scaled by sqrt(hs_v) (the value size) instead of sqrt(hs)

blockwise_attention scales the scores by 1/sqrt(v.shape[-1]) instead of 1/sqrt(q.shape[-1]).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scale = 1.0 / math.sqrt(q.shape[-1])\n',
        '    scale = 1.0 / math.sqrt(v.shape[-1])\n',
    ),
]
