"""MISTAKE: none
Rows normalised with F.normalize(tril, dim=-1), whose default is the L2 norm (p=2): row t holds 1/sqrt(t+1), not
1/(t+1). The L1 norm (p=1) would be right; no known mistake gives these numbers.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        'import torch\n',
        'import torch\nimport torch.nn.functional as F\n',
    ),
    (
        '    return tril / tril.sum(dim=-1, keepdim=True)  # (T, T) / (T, 1): each row sums to 1\n',
        '    return F.normalize(tril, dim=-1)  # each row scaled to norm 1\n',
    ),
]
