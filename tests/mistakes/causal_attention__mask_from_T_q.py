"""MISTAKE: none

Builds the mask from the number of queries alone, (T_q, T_q): right whenever T_q == T_k, an error otherwise.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()  # (T_q, T_k)\n',
        '    visible = torch.ones(T_q, T_q, dtype=torch.bool, device=q.device).tril()  # (T_q, T_q)\n',
    ),
]
