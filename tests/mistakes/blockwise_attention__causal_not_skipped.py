"""MISTAKE: blocks wholly in the future computed and masked instead of skipped

Visits every key block with causal=True and masks the future ones: right values, but no work saved.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        k_end = min(T_k, q1) if causal else T_k\n',
        '        k_end = T_k\n',
    ),
]
