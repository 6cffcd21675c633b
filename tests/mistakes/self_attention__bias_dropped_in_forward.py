"""MISTAKE: biases not added (x @ W.weight.T instead of calling the nn.Linear layer)

A copy of the stage 6 solution with one bug: SelfAttentionLinear's forward multiplies by the layers' weights
(x @ self.W_query.weight.T) instead of calling the layers, so the biases that qkv_bias=True creates are never added.
The grader's biases are nonzero in one values check only: this costs that check alone.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        queries = self.W_query(x)  # (B, T, d_in) -> (B, T, d_out)\n'
        '        keys = self.W_key(x)  # (B, T, d_out)\n'
        '        values = self.W_value(x)  # (B, T, d_out)\n',
        '        queries = x @ self.W_query.weight.T\n'
        '        keys = x @ self.W_key.weight.T\n'
        '        values = x @ self.W_value.weight.T\n',
    ),
]
