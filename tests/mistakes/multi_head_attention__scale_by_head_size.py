"""MISTAKE: scaled by head_size instead of sqrt(head_size)

The scores are divided by the head size itself, not by its square root.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T, T)\n",
        "        scores = q @ k.transpose(-2, -1) / self.head_size  # (B, nh, T, T)\n",
    ),
]
