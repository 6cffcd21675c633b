"""MISTAKE: none
Loops t over 1..T to slice x[:t] (t rows, right) but divides by t + 1 as in the formula written for 0-based t: every
step is divided by one more than the number of rows it sums. No known mistake gives these numbers.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        for t in range(T):\n            out[b, t] = seqs[b, : t + 1].mean(dim=0)  # (t+1, C) -> (C,)\n',
        '        for t in range(1, T + 1):\n            out[b, t - 1] = seqs[b, :t].sum(dim=0) / (t + 1)  # (t, C) -> (C,)\n',
    ),
]
