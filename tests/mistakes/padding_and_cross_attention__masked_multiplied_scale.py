"""MISTAKE: multiplied by sqrt(d_k) instead of divided

masked_attention: the scores are multiplied by sqrt(hs) instead of divided by it.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n',
        '    scores = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n',
    ),
]
