"""MISTAKE: none

F.dropout(weights, p=self.dropout.p) without training=self.training: F.dropout's training defaults to True, so the
weights are still dropped after .eval().
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, nh, T, T)\n',
        '        weights = torch.softmax(scores, dim=-1)  # (B, nh, T, T)\n'
        '        weights = F.dropout(weights, p=self.dropout.p)  # training defaults to True\n',
    ),
    (
        'import torch\n'
        'from torch import nn\n',
        'import torch\n'
        'import torch.nn.functional as F\n'
        'from torch import nn\n',
    ),
]
