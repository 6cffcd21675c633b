"""MISTAKE: k.T on batched input (reverses every dim; use k.transpose(-2, -1))

A copy of the stage 5 solution with one bug: k.T is only a transpose for a 2-D k; on (B, T, d_k) it reverses
all three dims.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
        '    return q @ k.T / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
    ),
]
