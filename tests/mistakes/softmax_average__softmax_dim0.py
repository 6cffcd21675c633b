"""MISTAKE: softmax over the wrong dim (columns sum to 1, not rows)

A copy of the stage 3 solution with one bug: softmax over dim 0, so every column sums to 1 instead of every row.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return torch.softmax(scores, dim=-1)  # (T, T), each row sums to 1\n',
        '    return torch.softmax(scores, dim=0)  # (T, T)\n',
    ),
]
