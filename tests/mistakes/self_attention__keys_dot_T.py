"""MISTAKE: x.T on batched input (reverses every dim; use x.transpose(-2, -1))

Transposes the keys with .T, which reverses every dimension of a batched tensor.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        values = self.W_value(x)  # (B, T, d_out)\n        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        values = self.W_value(x)  # (B, T, d_out)\n        scores = queries @ keys.T  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
    ),
    (
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n',
        '        scores = queries @ keys.T  # (B, T, T)\n',
    ),
]
