"""MISTAKE: a query with no visible key averages every value (hidden scores set to a large negative number, or its scores set to 0 and its weights never zeroed after the softmax, give a uniform row) instead of getting zeros

masked_attention sets the scores of a query with no visible key to 0 before the softmax (no NaN) but forgets to
zero its weights afterwards: such a query averages every value, padding included."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)  # (B, T_q, T_k)",
        "weights = torch.softmax(scores, dim=-1)",
    ),
]
