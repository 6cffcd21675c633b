"""MISTAKE: dropout not applied in training mode

Creates self.dropout in __init__ but forgets to pass the attention weights through it in forward.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, T, T)\n",
        "        weights = torch.softmax(scores, dim=-1)  # (B, T, T)\n",
    ),
]
