"""MISTAKE: device argument ignored (the tensor is made on the default device)

A copy of the stage 2 solution with one bug: causal_mean_weights passes dtype= but forgets device=, so the
matrix is always made on the CPU. On a machine with only a CPU every device looks honoured; the check also asks
for device="meta", where the mistake shows on any machine.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    ones = torch.ones(T, T, device=device, dtype=dtype)  # (T, T)\n",
        "    ones = torch.ones(T, T, dtype=dtype)  # (T, T)\n",
    ),
]
