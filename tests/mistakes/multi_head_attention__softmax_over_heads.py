"""MISTAKE: softmax over the heads (dim=1) instead of the keys (dim=-1)

Module: softmax(dim=1) on (B, nh, T, T): across heads.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, nh, T, T)',
        '        weights = self.dropout(torch.softmax(scores, dim=1))  # (B, nh, T, T)',
    ),
]
