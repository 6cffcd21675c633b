"""MISTAKE: none
CausalSelfAttention.forward returns the attention weights (B, T, T) instead of weights @ v: every check says which
shape was expected, the gradient check too (its error is not blamed on the learner's code).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        return weights @ v  # (B, T, T) @ (B, T, hs) -> (B, T, hs)\n",
        "        return weights  # (B, T, T)\n",
    ),
]
