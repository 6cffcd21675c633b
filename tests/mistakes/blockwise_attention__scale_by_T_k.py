"""MISTAKE: scaled by sqrt(T) instead of sqrt(d_k)

blockwise_attention divides the scores by sqrt(T_k), the number of keys, instead of sqrt(hs).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scale = 1.0 / math.sqrt(q.shape[-1])\n',
        '    scale = 1.0 / math.sqrt(k.shape[-2])\n',
    ),
]
