"""MISTAKE: none

masked_attention divides the scores by sqrt(T_q), the number of queries, instead of sqrt(hs): right by
coincidence where T_q == hs (the public inputs), wrong on the hidden draws, which keep T_q apart from hs.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n',
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-2])  # (B, T_q, T_k)\n',
    ),
]
