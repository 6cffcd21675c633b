"""MISTAKE: Python loop instead of one matrix product
causal_mean_matmul is one product, but causal_mean_weights, which it calls, fills the table row by row in a Python
loop: the number of operations grows with T.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    ones = torch.ones(T, T, device=device, dtype=dtype)  # (T, T)\n    tril = torch.tril(ones)  # (T, T), zeros above the diagonal\n    return tril / tril.sum(dim=-1, keepdim=True)  # (T, T) / (T, 1): each row sums to 1\n',
        '    w = torch.zeros(T, T, device=device, dtype=dtype)\n    for t in range(T):\n        w[t, : t + 1] = 1.0 / (t + 1)\n    return w\n',
    ),
]
