"""MISTAKE: keys and queries swapped (k @ q^T is the scores transposed: row t holds key t against every query); use q @ k.transpose(-2, -1)

CrossAttention computes its scores as k @ q.transpose(-2, -1)."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "scores = q @ k.transpose(-2, -1) / math.sqrt(hs)  # (B, nh, T_q, T_k)",
        "scores = k @ q.transpose(-2, -1) / math.sqrt(hs)",
    ),
]
