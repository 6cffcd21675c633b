"""MISTAKE: mask applied after softmax (the future still counts in the normalisation)

Applies the softmax to every score and only then zeroes the future weights, so the future still takes part in the normalisation.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, T, T)\n',
        '        weights = torch.softmax(scores, dim=-1).masked_fill(~self.mask[:T, :T], 0.0)\n        weights = self.dropout(weights)  # (B, T, T)\n',
    ),
    (
        '    weights = torch.softmax(scores, dim=-1)  # (B, T_q, T_k)\n    return weights @ v  # (B, T_q, T_k) @ (B, T_k, hs_v) -> (B, T_q, hs_v)\n',
        '    weights = torch.softmax(scores, dim=-1)  # (B, T_q, T_k)\n    weights = weights.masked_fill(~visible, 0.0)\n    return weights @ v  # (B, T_q, T_k) @ (B, T_k, hs_v) -> (B, T_q, hs_v)\n',
    ),
    (
        '    scores = scores.masked_fill(~visible, float("-inf"))\n',
        '',
    ),
]
