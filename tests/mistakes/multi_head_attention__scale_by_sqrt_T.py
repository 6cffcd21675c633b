"""MISTAKE: scaled by the square root of the sequence length (T, or context_length) instead of sqrt(d_k)
The scores are divided by sqrt(T) (x.shape[1]) instead of sqrt(head_size). Where T equals another size of the module
(d_out, d_in, n_heads), the answer is also that size's mistake's, and no name is given rather than a wrong one.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T, T)\n",
        "        scores = q @ k.transpose(-2, -1) / math.sqrt(T)  # (B, nh, T, T)\n",
    ),
]
