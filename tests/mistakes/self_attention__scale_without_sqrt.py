"""MISTAKE: scaled by d_k instead of sqrt(d_k)

Divides by d_out itself instead of its square root.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n        return weights @ values  # (B, T, d_out)\n',
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / keys.shape[-1], dim=-1)  # (B, T, T)\n        return weights @ values  # (B, T, d_out)\n',
    ),
    (
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        weights = torch.softmax(scores / keys.shape[-1], dim=-1)  # (B, T, T)\n',
    ),
]
