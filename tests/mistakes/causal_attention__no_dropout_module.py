"""MISTAKE: none

Leaves dropout out altogether: no nn.Dropout in __init__, none in forward. The structure check says what is
missing; the training-mode check does not take a second point for it.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    ("        self.dropout = nn.Dropout(dropout)\n", ""),
    (
        "        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, T, T)\n",
        "        weights = torch.softmax(scores, dim=-1)  # (B, T, T)\n",
    ),
]
