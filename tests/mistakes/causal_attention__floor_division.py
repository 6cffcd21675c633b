"""MISTAKE: scores floor-divided by the scale (// rounds every scaled score down to a whole number): divide with /

The scores are floor-divided by sqrt(d_k) (// instead of /), in the function and in the module: every scaled
score is rounded down to a whole number.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n',
        '    scores = q @ k.transpose(-2, -1) // math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n',
    ),
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)\n',
        '        scores = q @ k.transpose(-2, -1) // math.sqrt(k.shape[-1])  # (B, T, T)\n',
    ),
]
