"""MISTAKE: none

With causal=True the key loop stops at q1 - 1 instead of q1 (min(T_k, q1 - 1)): where the last query block
holds one position, its own key block, the diagonal one, is skipped and the last query sees no key of its own.
With one key dropped, which only that query sees, the numbers are also those of a dropped last block: neither is
named.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        k_end = min(T_k, q1) if causal else T_k\n',
        '        k_end = min(T_k, q1 - 1) if causal else T_k\n',
    ),
]
