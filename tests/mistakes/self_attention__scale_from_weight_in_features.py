"""MISTAKE: scaled by sqrt(d_in) instead of sqrt(d_out)

The scale read from the weights' shapes, from the wrong end: W_query.shape[0] of a raw (d_in, d_out) matrix and
W_query.weight.shape[1] of an nn.Linear (which stores (d_out, d_in)) are both d_in.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        values = x @ self.W_value  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n'
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        values = x @ self.W_value  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n'
        '        weights = torch.softmax(scores / math.sqrt(self.W_query.shape[0]), dim=-1)  # (B, T, T)\n',
    ),
    (
        '        values = self.W_value(x)  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n'
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        values = self.W_value(x)  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n'
        '        weights = torch.softmax(scores / math.sqrt(self.W_query.weight.shape[1]), dim=-1)  # (B, T, T)\n',
    ),
]
