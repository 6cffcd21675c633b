"""MISTAKE: scale applied after the softmax (the weights divided by sqrt(d_k): rows no longer sum to 1)

Linear: softmax(scores) / sqrt(d_out) (scaled after the softmax).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        values = self.W_value(x)  # (B, T, d_out)\n        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        values = self.W_value(x)  # (B, T, d_out)\n        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores, dim=-1) / math.sqrt(keys.shape[-1])  # (B, T, T)\n',
    ),
]
