"""MISTAKE: missing scale (not divided by sqrt(d_k); d_k ** (1 // 2) is d_k ** 0 = 1: use math.sqrt(d_k))

blockwise_attention forgets to divide the scores by sqrt(hs); the blocks and the online softmax are right.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scale = 1.0 / math.sqrt(q.shape[-1])\n',
        '    scale = 1.0\n',
    ),
]
