"""MISTAKE: off-by-one slice (x[:t] instead of x[:t+1]; step 0 averages nothing: NaN)

A copy of the stage 1 solution with one bug: each step averages x[b, :t], the steps before it, and the loop starts
at t = 0, where the mean of an empty slice is NaN. The form that skips t = 0 (zeros there) was named; this one
was not.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            out[b, t] = seqs[b, : t + 1].mean(dim=0)  # (t+1, C) -> (C,)\n',
        '            out[b, t] = seqs[b, :t].mean(dim=0)  # (t, C) -> (C,)\n',
    ),
]
