"""MISTAKE: scaled by sqrt(d_in) instead of sqrt(d_out)

Divides by the square root of the embedding size, not of the key size.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n        return weights @ values  # (B, T, d_out)\n',
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(x.shape[-1]), dim=-1)  # (B, T, T)\n        return weights @ values  # (B, T, d_out)\n',
    ),
    (
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        weights = torch.softmax(scores / math.sqrt(x.shape[-1]), dim=-1)  # (B, T, T)\n',
    ),
]
