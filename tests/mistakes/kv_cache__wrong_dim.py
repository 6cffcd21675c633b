"""MISTAKE: concatenated on the wrong dim (heads, dim 1, instead of time, dim -2)

Concatenates the new keys and values along dim 1, the heads, instead of time.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            self.keys = torch.cat([self.keys, k_new], dim=-2)  # time is dim -2\n            self.values = torch.cat([self.values, v_new], dim=-2)\n',
        '            self.keys = torch.cat([self.keys, k_new], dim=1)\n            self.values = torch.cat([self.values, v_new], dim=1)\n',
    ),
]
