"""MISTAKE: torch.softmax over the whole row (not block by block)

online_softmax hands the whole row to torch.softmax: right values, but nothing is read block by block.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    N = x.shape[-1]\n    m = x.new_full(',
        '    return torch.softmax(x, dim=-1)\n    N = x.shape[-1]\n    m = x.new_full(',
    ),
]
