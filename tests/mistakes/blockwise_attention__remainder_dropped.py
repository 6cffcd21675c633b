"""MISTAKE: last partial block of queries and keys dropped

Counts the blocks with T // block_size, so the positions of a last, shorter block are never visited.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    for q0 in range(0, T_q, block_size):\n',
        '    for q0 in range(0, T_q // block_size * block_size, block_size):\n',
    ),
    (
        '        k_end = min(T_k, q1) if causal else T_k\n',
        '        k_end = min(T_k // block_size * block_size, q1) if causal else T_k // block_size * block_size\n',
    ),
]
