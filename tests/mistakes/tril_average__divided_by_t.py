"""MISTAKE: row t divided by t instead of t + 1 (counts from torch.arange(T) start at 0: use torch.arange(1, T + 1))
The row counts come from torch.arange(T), which starts at 0: row 0 is divided by 0 (inf, and NaN where 0 / 0), and
every later row by one less than the number of steps it averages.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    return tril / tril.sum(dim=-1, keepdim=True)  # (T, T) / (T, 1): each row sums to 1\n',
        '    return tril / torch.arange(T, device=device, dtype=tril.dtype).unsqueeze(-1)  # (T, T) / (T, 1)\n',
    ),
]
