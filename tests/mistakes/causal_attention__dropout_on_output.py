"""MISTAKE: dropout on the output (instead of the attention weights)

Applies dropout to the output vectors instead of the attention weights.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, T, T)\n        return weights @ v  # (B, T, T) @ (B, T, hs) -> (B, T, hs)\n',
        '        weights = torch.softmax(scores, dim=-1)  # (B, T, T)\n        return self.dropout(weights @ v)  # (B, T, T) @ (B, T, hs) -> (B, T, hs)\n',
    ),
]
