"""MISTAKE: none
softmax_stable subtracts the mean along dim instead of the maximum: any shift leaves a softmax unchanged, so small
logits are right, but a row of +1e4 next to -1e4 still overflows. It is neither "missing max subtraction" nor the
minimum shift, and is not named as one.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    shifted = x - x.amax(dim=dim, keepdim=True)  # (..., n) - (..., 1): largest entry is now 0\n',
        '    shifted = x - x.mean(dim=dim, keepdim=True)  # (..., n) - (..., 1): centred on 0\n',
    ),
]
