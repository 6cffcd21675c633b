"""MISTAKE: full T x T scores built

Computes the whole score matrix at once and only then walks over it in blocks: the values are right, but the
T x T matrix the stage exists to avoid is built.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    outputs = []\n    for q0 in range(0, T_q, block_size):\n        q_blk = q[..., q0:q0 + block_size, :] * scale  # (..., bq, hs)\n',
        '    outputs = []\n    all_scores = (q * scale) @ k.transpose(-2, -1)  # (..., T_q, T_k)\n    for q0 in range(0, T_q, block_size):\n        q_blk = q[..., q0:q0 + block_size, :] * scale  # (..., bq, hs)\n',
    ),
    (
        '            scores = q_blk @ k_blk.transpose(-2, -1)  # (..., bq, bk): the only scores that exist\n',
        '            scores = all_scores[..., q0:q1, k0:k1]\n',
    ),
]
