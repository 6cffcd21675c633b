"""MISTAKE: divided by T instead of t + 1 (the number of steps averaged in row t)

Divides every row by the sequence length: only the last row is an average.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    return tril / tril.sum(dim=-1, keepdim=True)  # (T, T) / (T, 1): each row sums to 1\n",
        "    return tril / T  # (T, T)\n",
    ),
]
