"""MISTAKE: none
softmax_stable subtracts the maximum of the whole tensor (x.max()) instead of the maximum along dim: any constant
shift leaves a softmax unchanged, but a row whose logits all sit far below the tensor's maximum (rows near -1e4 next
to rows near +1e4) underflows to 0 / 0.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    shifted = x - x.amax(dim=dim, keepdim=True)  # (..., n) - (..., 1): largest entry is now 0\n",
        "    shifted = x - x.max()  # the largest entry of the whole tensor is now 0\n",
    ),
]
