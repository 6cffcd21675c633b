"""MISTAKE: softmax over the wrong dim (columns sum to 1, not rows)

Normalises each column (over the queries) instead of each row.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n        return weights @ values  # (B, T, d_out)\n',
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-2)  # (B, T, T)\n        return weights @ values  # (B, T, d_out)\n',
    ),
    (
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-2)  # (B, T, T)\n',
    ),
]
