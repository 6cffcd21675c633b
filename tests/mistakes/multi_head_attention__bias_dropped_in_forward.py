"""MISTAKE: biases not added (x @ W.weight.T instead of calling the nn.Linear layer)

A copy of the stage 8 solution with one bug: the heads' merged output is multiplied by out_proj's weight instead of
going through the layer, so out_proj's bias (always there) is never added. The grader's biases are nonzero in one
values check only: this costs that check alone.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.

EDITS = [
    (
        '        return self.out_proj(out)  # (B, T, d_out)\n',
        '        return out @ self.out_proj.weight.T\n',
    ),
]
