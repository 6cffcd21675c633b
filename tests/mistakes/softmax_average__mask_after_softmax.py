"""MISTAKE: mask applied after softmax (rows no longer sum to 1)

A copy of the stage 3 solution with one bug: softmax runs over the unmasked zeros and the future is zeroed
afterwards, so row t holds 1/T instead of 1/(t+1).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = scores.masked_fill(future, float("-inf"))\n    return torch.softmax(scores, dim=-1)  # (T, T), each row sums to 1\n',
        '    weights = torch.softmax(scores, dim=-1)  # (T, T)\n    return weights.masked_fill(future, 0.0)\n',
    ),
]
