"""MISTAKE: Python loop instead of one matrix product

Applies the weights to one sequence at a time: a Python loop over the batch, whose operations grow with B.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    return weights @ x  # (T, T) @ (B, T, C) -> (B, T, C), broadcast over B\n",
        "    rows = [weights @ seq for seq in x.reshape(-1, T, x.shape[-1])]  # one product per sequence\n"
        "    return torch.stack(rows).reshape(x.shape)\n",
    ),
]
