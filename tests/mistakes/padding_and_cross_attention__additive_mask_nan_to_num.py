"""MISTAKE: none

Hides keys by adding a mask of 0 and -inf to the scores, then turns the NaN of a query with no visible key into
zeros after the softmax (``nan_to_num``): the outputs are right, but the softmax's NaN still flows back through
the addition into the scores' gradient, so every weight's gradient of the batch is NaN.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            scores = scores.masked_fill(~visible, float("-inf")).masked_fill(~has_key, 0.0)\n'
        '            weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)\n',
        '            hidden = torch.zeros_like(scores).masked_fill(~visible, float("-inf"))\n'
        '            weights = torch.nan_to_num(torch.softmax(scores + hidden, dim=-1), nan=0.0)\n',
    ),
]
