"""MISTAKE: running sum not rescaled when the maximum grows

online_softmax sets m = m_new before rescaling the running sum, so exp(m - m_new) is 1.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        # the sum so far was taken against the old maximum: restate it against the new one\n',
        '        # the sum so far was taken against the old maximum: restate it against the new one\n        m = m_new\n',
    ),
    (
        '        total = total * torch.exp(m - m_new) + torch.exp(block - m_new).sum(dim=-1, keepdim=True)\n        m = m_new\n',
        '        total = total * torch.exp(m - m_new) + torch.exp(block - m_new).sum(dim=-1, keepdim=True)\n',
    ),
]
