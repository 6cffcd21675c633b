"""MISTAKE: biases not added (x @ W.weight.T instead of calling the nn.Linear layer)

A copy of the stage 7 solution with one bug: the forward multiplies x by the projections' weights instead of calling
the layers, so the biases that qkv_bias=True creates are never added. The grader's biases are nonzero in one values
check only: this costs that check alone.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.

EDITS = [
    (
        '        q = self.W_query(x)  # (B, T, d_in) -> (B, T, hs)\n'
        '        k = self.W_key(x)  # (B, T, hs)\n'
        '        v = self.W_value(x)  # (B, T, hs)\n',
        '        q = x @ self.W_query.weight.T\n'
        '        k = x @ self.W_key.weight.T\n'
        '        v = x @ self.W_value.weight.T\n',
    ),
]
