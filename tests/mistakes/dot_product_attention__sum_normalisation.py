"""MISTAKE: sum normalisation instead of softmax (no exp)

A copy of the stage 4 solution with one bug: softmax_naive divides the logits by their sum and never
exponentiates (negative 'probabilities', and a division by ~0 when the logits sum to ~0).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    e = torch.exp(x)\n    return e / e.sum(dim=dim, keepdim=True)  # (..., n) / (..., 1)\n',
        '    return x / x.sum(dim=dim, keepdim=True)  # (..., n) / (..., 1)\n',
    ),
]
