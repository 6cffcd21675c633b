"""MISTAKE: scores floor-divided by the scale (// rounds every scaled score down to a whole number): divide with /

masked_attention: the scores are floor-divided by sqrt(hs) (// instead of /).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n',
        '    scores = q @ k.transpose(-2, -1) // math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n',
    ),
]
