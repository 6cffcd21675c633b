"""MISTAKE: running sum and accumulator not rescaled when the maximum grows (exp(m - m_new) taken after m = m_new is 1)

blockwise_attention updates the running maximum first and then takes exp(m - m), which is 1: neither the running sum nor the accumulator is ever rescaled.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))\n            rescale = torch.exp(m - m_new)  # restates what was summed against the old maximum\n            p = torch.exp(scores - m_new)\n',
        '            m = torch.maximum(m, scores.amax(dim=-1, keepdim=True))\n            rescale = torch.exp(m - m)\n            p = torch.exp(scores - m)\n',
    ),
    (
        '            m = m_new\n',
        '',
    ),
]
