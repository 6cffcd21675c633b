"""MISTAKE: none

A copy of the stage 4 solution with one bug: attention_weights normalises with softmax_naive, whose exp overflows
for scores above 88 in float32 (NaN weights), although its own docstring promises rows that sum to 1.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return torch.softmax(scores, dim=-1)  # (B, T, T); softmax_stable(scores) gives the same\n',
        '    return softmax_naive(scores)  # (B, T, T)\n',
    ),
]
