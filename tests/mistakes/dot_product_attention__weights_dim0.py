"""MISTAKE: softmax over the wrong dim (dim=0: across the batch)

A copy of the stage 4 solution with one bug: attention_weights normalises over dim 0, which is the rows'
direction only for a single (T, T) table, and the batch for (B, T, T).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return torch.softmax(scores, dim=-1)  # (B, T, T); softmax_stable(scores) gives the same\n',
        '    return torch.softmax(scores, dim=0)  # (T, T): normalise each column\n',
    ),
]
