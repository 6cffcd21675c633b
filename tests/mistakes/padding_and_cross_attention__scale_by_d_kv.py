"""MISTAKE: scaled by sqrt(d_kv) (the context's width) instead of sqrt(head_size)

CrossAttention divides the scores by sqrt(context.shape[-1]) instead of sqrt(head_size).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        scores = q @ k.transpose(-2, -1) / math.sqrt(hs)  # (B, nh, T_q, T_k)\n",
        "        scores = q @ k.transpose(-2, -1) / math.sqrt(context.shape[-1])  # (B, nh, T_q, T_k)\n",
    ),
]
