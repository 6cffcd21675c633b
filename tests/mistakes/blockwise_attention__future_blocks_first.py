"""MISTAKE: none

With causal=True, masks the key blocks in the future instead of skipping them, and visits the key blocks from the
last: a query's first block can then hide every key from it, its running maximum stays -inf, and
exp(-inf - (-inf)) is NaN. Without the mask the same code is right.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        k_end = min(T_k, q1) if causal else T_k\n        for k0 in range(0, k_end, block_size):\n",
        "        k_end = T_k\n        for k0 in reversed(range(0, k_end, block_size)):\n",
    ),
]
