"""MISTAKE: off-by-one mask (one future step visible: tril(diagonal=1))

Causal_mask uses tril(diagonal=1): one future step visible.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        'return torch.ones(T, T, dtype=torch.bool, device=device).tril()',
        'return torch.ones(T, T, dtype=torch.bool, device=device).tril(diagonal=1)',
    ),
]
