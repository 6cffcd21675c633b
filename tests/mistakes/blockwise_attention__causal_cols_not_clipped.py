"""MISTAKE: none

The causal mask's columns are arange(k0, k0 + block_size), not clipped to the last, shorter key block: where
that block is a diagonal one of two or more positions the mask does not fit the scores.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '                cols = torch.arange(k0, k1, device=q.device)\n',
        '                cols = torch.arange(k0, k0 + block_size, device=q.device)\n',
    ),
]
