"""MISTAKE: missing scale (not divided by sqrt(d_k); d_k ** (1 // 2) is d_k ** 0 = 1: use math.sqrt(d_k))

The scores go into the softmax unscaled.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n        return weights @ values  # (B, T, d_out)\n',
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores, dim=-1)  # (B, T, T)\n        return weights @ values  # (B, T, d_out)\n',
    ),
    (
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        weights = torch.softmax(scores, dim=-1)  # (B, T, T)\n',
    ),
]
