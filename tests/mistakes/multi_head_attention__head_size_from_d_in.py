"""MISTAKE: none

The head size for the scale is computed as d_in // n_heads instead of d_out // n_heads. On the graders' shapes
its numbers are those of other scale mistakes, so no label is given (three wrong ones were).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        self.head_size = d_out // n_heads\n",
        "        self.head_size = d_in // n_heads\n",
    ),
]
