"""MISTAKE: minimum subtracted instead of the maximum (exp overflows where logits along dim differ by hundreds)

A copy of the stage 4 solution with one bug: softmax_stable shifts x by its minimum along dim. Softmax does not
change under a shift, so small logits give the right answer; but the largest exponent is now as large as the
row's range, and logits of +1e4 and -1e4 in one row overflow exactly as the naive softmax does. The feedback
must name this shift, never "missing max subtraction".
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    shifted = x - x.amax(dim=dim, keepdim=True)  # (..., n) - (..., 1): largest entry is now 0\n",
        "    shifted = x - x.amin(dim=dim, keepdim=True)  # (..., n) - (..., 1): smallest entry is now 0\n",
    ),
]
