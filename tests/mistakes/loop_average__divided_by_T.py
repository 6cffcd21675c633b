"""MISTAKE: divided by T instead of t+1
Sums the visible steps but divides every prefix by the sequence length T: only the last step is an average.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            out[b, t] = seqs[b, : t + 1].mean(dim=0)  # (t+1, C) -> (C,)\n',
        '            out[b, t] = seqs[b, : t + 1].sum(dim=0) / T  # (t+1, C) -> (C,)\n',
    ),
]
