"""MISTAKE: scaled by sqrt(T) instead of sqrt(d_k)

causal_attention divides the scores by sqrt(k.shape[-2]), the number of keys, instead of sqrt(d_k).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n",
        "    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # (B, T_q, T_k)\n",
    ),
]
