"""MISTAKE: masked with 0 instead of -inf (the future still gets weight)

torch.tril applied to the scores themselves: the future scores become 0, not -inf, so the softmax still gives them
weight.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()  # (T_q, T_k)\n'
        '    scores = scores.masked_fill(~visible, float("-inf"))\n',
        '    scores = torch.tril(scores)  # the future set to 0\n',
    ),
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n',
        '        scores = scores.tril()  # the future set to 0\n',
    ),
]
