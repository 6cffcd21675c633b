"""MISTAKE: head size taken from d_in (scaled by sqrt(d_in // n_heads) instead of sqrt(d_out // n_heads))

The head size for the scale is computed as d_in // n_heads instead of d_out // n_heads. On the public checks'
shapes its numbers are those of other scale mistakes, so they name none (three wrong names were given once); the
hidden random check draws sizes at which every scale differs, and names it for every student.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        self.head_size = d_out // n_heads\n",
        "        self.head_size = d_in // n_heads\n",
    ),
]
