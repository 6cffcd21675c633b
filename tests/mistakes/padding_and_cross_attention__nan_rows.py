"""MISTAKE: NaN for a query with no visible key (softmax of a row that is all -inf is 0/0)

Masks with -inf and calls softmax, with no special case for a query whose keys are all hidden.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = scores.masked_fill(~has_key, 0.0)  # a row of -inf would give NaN (0 / 0) in the softmax\n'
        '    weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)  # (B, T_q, T_k)\n',
        '    weights = torch.softmax(scores, dim=-1)  # (B, T_q, T_k)\n',
    ),
    (
        '            scores = scores.masked_fill(~visible, float("-inf")).masked_fill(~has_key, 0.0)\n'
        '            weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)\n',
        '            scores = scores.masked_fill(~visible, float("-inf"))\n'
        '            weights = torch.softmax(scores, dim=-1)\n',
    ),
]
