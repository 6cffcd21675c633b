"""MISTAKE: scaled by d_k instead of sqrt(d_k)

Queries and keys each divided by sqrt(d_k) before their product: the scores are divided by d_k.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        values = x @ self.W_value  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n'
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        values = x @ self.W_value  # (B, T, d_out)\n'
        '        queries, keys = queries / math.sqrt(keys.shape[-1]), keys / math.sqrt(keys.shape[-1])\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n'
        '        weights = torch.softmax(scores, dim=-1)  # (B, T, T)\n',
    ),
    (
        '        values = self.W_value(x)  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n'
        '        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        values = self.W_value(x)  # (B, T, d_out)\n'
        '        queries, keys = queries / math.sqrt(keys.shape[-1]), keys / math.sqrt(keys.shape[-1])\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n'
        '        weights = torch.softmax(scores, dim=-1)  # (B, T, T)\n',
    ),
]
