"""MISTAKE: multiplied by sqrt(d_k) instead of divided

The queries are multiplied by sqrt(hs) instead of 1 / sqrt(hs).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        q_blk = q[..., q0:q0 + block_size, :] * scale  # (..., bq, hs)\n',
        '        q_blk = q[..., q0:q0 + block_size, :] * math.sqrt(q.shape[-1])  # (..., bq, hs)\n',
    ),
]
