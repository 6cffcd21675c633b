"""MISTAKE: none

Adds the input to the output ("a residual") whenever the sizes allow it, d_in == d_out: right for every other
shape, wrong for square projections.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        return weights @ values  # (B, T, d_out)\n",
        "        out = weights @ values  # (B, T, d_out)\n"
        "        return out + x if x.shape[-1] == out.shape[-1] else out\n",
    ),
]
