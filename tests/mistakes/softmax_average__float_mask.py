"""MISTAKE: none

A copy of the stage 3 solution with one bug: the mask is a float tensor of ones and zeros instead of booleans.
The weights still come out right (the float mask is compared with 0), but causal_mask's dtype is wrong.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    future = ~causal_mask(T, device=device)  # (T, T), True where s > t\n',
        '    future = causal_mask(T, device=device) == 0  # (T, T), True where s > t\n',
    ),
    (
        '    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)\n',
        '    return torch.ones(T, T, device=device).tril()  # (T, T)\n',
    ),
]
