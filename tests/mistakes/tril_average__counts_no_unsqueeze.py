"""MISTAKE: row counts divide the columns, not the rows (a (T,) vector of sums or counts: keepdim=True, or [:, None], missing)
The counts 1..T as a (T,) vector from torch.arange(1, T + 1), not a (T, 1) column: they broadcast along the columns,
so w[t, s] = 1 / (s + 1).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return tril / tril.sum(dim=-1, keepdim=True)  # (T, T) / (T, 1): each row sums to 1\n',
        '    return tril / torch.arange(1, T + 1, device=device, dtype=tril.dtype)  # (T, T) / (T,)\n',
    ),
]
