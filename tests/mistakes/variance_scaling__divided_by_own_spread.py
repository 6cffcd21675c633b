"""MISTAKE: none

The scores are divided by their own standard deviation, which for inputs of unit variance is close to sqrt(d_k)
but is not the scale: a data-dependent normalisation that must fail for every student, also at half precision.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n",
        "    scores = q @ k.transpose(-2, -1)\n    return scores / scores.std()\n",
    ),
]
