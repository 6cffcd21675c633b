"""MISTAKE: running maximum not updated (exp overflows)

Keeps the first block's maximum for the whole pass: exact in theory, but exp() overflows as soon as a later block
holds a much larger score.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))\n',
        '            m_new = scores.amax(dim=-1, keepdim=True) if k0 == 0 else m\n',
    ),
]
