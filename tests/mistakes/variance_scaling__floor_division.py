"""MISTAKE: scores floor-divided by the scale (// rounds every scaled score down to a whole number): divide with /

`//` instead of `/`: every scaled score is rounded down to a whole number.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
        '    return q @ k.transpose(-2, -1) // math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
    ),
]
