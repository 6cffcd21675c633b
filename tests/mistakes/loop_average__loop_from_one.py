"""MISTAKE: step 0 never written (the loop over t starts at 1; out[0] keeps the 0 it was made with)
The loop over the steps starts at t = 1 (to avoid an empty slice?) on a tensor of zeros: every later step is right,
step 0 stays 0 instead of x[..., 0, :].
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    out = torch.empty_like(seqs)  # (B, T, C), a fresh tensor: x is never written to\n',
        '    out = torch.zeros_like(seqs)  # (B, T, C), a fresh tensor: x is never written to\n',
    ),
    (
        '        for t in range(T):\n',
        '        for t in range(1, T):\n',
    ),
]
