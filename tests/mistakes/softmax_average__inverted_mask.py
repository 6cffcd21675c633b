"""MISTAKE: inverted mask (the future visible, the past hidden)

A copy of the stage 3 solution with one bug: masked_fill receives the causal mask itself instead of ~mask,
so -inf lands on the visible steps and the last row becomes NaN.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    future = ~causal_mask(T, device=device)  # (T, T), True where s > t\n',
        '    future = causal_mask(T, device=device)  # (T, T)\n',
    ),
]
