"""MISTAKE: none

The head size for the scale is computed as d_in // n_heads instead of d_out // n_heads (the split uses d_out):
where that size is right by coincidence no label fits; no check may depend on the seed.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        self.head_size = d_out // n_heads\n",
        "        self.head_size = d_in // n_heads\n",
    ),
    (
        "        q, k, v = (t.view(B, T_new, self.n_heads, self.head_size).transpose(1, 2)  # (B, nh, T_new, hs)\n",
        "        q, k, v = (t.view(B, T_new, self.n_heads, -1).transpose(1, 2)  # (B, nh, T_new, hs)\n",
    ),
]
