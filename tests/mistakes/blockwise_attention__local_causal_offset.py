"""MISTAKE: causal mask built from positions within the block (wrong causal offset)

Builds the causal mask of every block from positions counted inside the block (0..block_size - 1), as if each
key block were on the diagonal.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            if causal and k1 - 1 > q0:  # the block reaches past some query: hide its future keys\n                rows = torch.arange(q0, q1, device=q.device).unsqueeze(-1)\n                cols = torch.arange(k0, k1, device=q.device)\n',
        '            if causal:\n                rows = torch.arange(q1 - q0, device=q.device).unsqueeze(-1)\n                cols = torch.arange(k1 - k0, device=q.device)\n',
    ),
]
