"""MISTAKE: missing out_proj (the heads are never mixed)

Leaves out the output projection that mixes the heads.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        return self.out_proj(out)  # (B, T, d_out)\n',
        '        return out  # (B, T, d_out)\n',
    ),
    (
        '        self.out_proj = nn.Linear(d_out, d_out)\n',
        '',
    ),
]
