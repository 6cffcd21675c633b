"""MISTAKE: missing max subtraction (exp overflows for large logits)

A copy of the stage 4 solution with one bug: softmax_stable forgets to subtract the maximum, so it is the
naive softmax and overflows (inf / inf = NaN) for logits of 1e4.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    shifted = x - x.amax(dim=dim, keepdim=True)  # (..., n) - (..., 1): largest entry is now 0\n    e = torch.exp(shifted)  # every entry in (0, 1]\n',
        '    e = torch.exp(x)  # every entry positive\n',
    ),
]
