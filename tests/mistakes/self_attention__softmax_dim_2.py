"""MISTAKE: none

softmax(dim=2) written for (B, T, T) scores: right for one leading batch dim, an error for one sequence (T, d_in)
(scores (T, T) have no dim 2), and over the queries for two leading dims.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        values = x @ self.W_value  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n'
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        values = x @ self.W_value  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n'
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=2)  # (B, T, T)\n',
    ),
    (
        '        values = self.W_value(x)  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n'
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        values = self.W_value(x)  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n'
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=2)  # (B, T, T)\n',
    ),
]
