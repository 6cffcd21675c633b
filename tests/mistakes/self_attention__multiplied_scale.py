"""MISTAKE: multiplied by sqrt(d_k) instead of divided

The scores are multiplied by sqrt(d_out) instead of divided by it, in both modules.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        values = x @ self.W_value  # (B, T, d_out)\n        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        values = x @ self.W_value  # (B, T, d_out)\n        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores * math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
    ),
    (
        '        values = self.W_value(x)  # (B, T, d_out)\n        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        values = self.W_value(x)  # (B, T, d_out)\n        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores * math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
    ),
]
