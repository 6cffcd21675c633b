"""MISTAKE: diagonal masked too (a step cannot see itself)

A "future" mask built with triu() and its default diagonal=0: the diagonal is hidden as well, so a step cannot
see itself (and the first step sees nothing at all: a row of NaN).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()  # (T_q, T_k)\n'
        '    scores = scores.masked_fill(~visible, float("-inf"))\n',
        '    future = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).triu()  # (T_q, T_k)\n'
        '    scores = scores.masked_fill(future, float("-inf"))\n',
    ),
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n',
        '        scores = scores.masked_fill(self.mask[:T, :T].T, float("-inf"))  # tril transposed: triu()\n',
    ),
]
