"""MISTAKE: softmax over the wrong dim (columns sum to 1, not rows)

softmax(dim=2) on (B, nh, T, T) scores: over the queries, not the keys (a near-miss of the softmax over the heads,
dim=1).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, nh, T, T)\n',
        '        weights = self.dropout(torch.softmax(scores, dim=2))  # (B, nh, T, T)\n',
    ),
]
