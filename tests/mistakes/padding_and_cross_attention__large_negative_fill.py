"""MISTAKE: a query with no visible key averages every value (hidden scores set to a large negative number, or its scores set to 0 and its weights never zeroed after the softmax, give a uniform row) instead of getting zeros

Hides keys with -1e9 instead of -inf: no NaN, but a query whose keys are all hidden gets equal weights on all of
them.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = scores.masked_fill(~visible, float("-inf"))\n'
        '    scores = scores.masked_fill(~has_key, 0.0)  # a row of -inf would give NaN (0 / 0) in the softmax\n'
        '    weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)  # (B, T_q, T_k)\n',
        '    scores = scores.masked_fill(~visible, -1e9)  # a large negative number: exp gives 0, never NaN\n'
        '    weights = torch.softmax(scores, dim=-1)  # (B, T_q, T_k)\n',
    ),
]
