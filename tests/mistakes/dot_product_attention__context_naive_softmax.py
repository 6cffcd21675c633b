"""MISTAKE: none
context_vectors applies softmax_naive to the scores instead of calling attention_weights: right for small inputs,
NaN as soon as a score passes about 88 in float32.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    weights = attention_weights(attention_scores(x))  # (B, T, T)\n",
        "    weights = softmax_naive(attention_scores(x))  # (B, T, T)\n",
    ),
]
