"""MISTAKE: running sum not rescaled when the maximum grows

online_softmax adds each block's exp(x - new max) to a sum still computed against the old maximum.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        total = total * torch.exp(m - m_new) + torch.exp(block - m_new).sum(dim=-1, keepdim=True)\n',
        '        total = total + torch.exp(block - m_new).sum(dim=-1, keepdim=True)\n',
    ),
]
