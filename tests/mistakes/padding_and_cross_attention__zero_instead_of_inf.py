"""MISTAKE: padded keys' scores set to 0 instead of -inf (they still get weight)

masked_attention writes 0 into the padded keys' scores: exp(0) = 1, so the padding keeps a share of every row.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        visible = visible & keys  # (B, T_q, T_k)\n',
        '        scores = scores.masked_fill(~keys, 0.0)  # (B, T_q, T_k)\n'
        '        visible = visible & torch.ones_like(keys)\n',
    ),
]
