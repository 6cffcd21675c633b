"""MISTAKE: missing scale (not divided by sqrt(d_k); d_k ** (1 // 2) is d_k ** 0 = 1: use math.sqrt(d_k))

The square root written d_k ** (1 // 2): 1 // 2 is 0, so the scores are divided by d_k ** 0 = 1 (no scale).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n',
        '    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** (1 // 2)  # (B, T_q, T_k)\n',
    ),
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)\n',
        '        scores = q @ k.transpose(-2, -1) / k.shape[-1] ** (1 // 2)  # (B, T, T)\n',
    ),
]
