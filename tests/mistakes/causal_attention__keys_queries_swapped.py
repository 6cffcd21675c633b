"""MISTAKE: keys and queries swapped (k @ q^T is the scores transposed: row t holds key t against every query); use q @ k.transpose(-2, -1)

Keys and queries swapped, k @ q^T (the transposed scores), in the function and in the module.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n',
        '    scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n',
    ),
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)\n',
        '        scores = k @ q.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)\n',
    ),
]
