"""MISTAKE: padded keys zeroed after the softmax (the weights no longer sum to 1)

masked_attention applies the causal mask before the softmax but zeroes the padded keys' weights after it, so the
padding still takes its share of every row's normalisation.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        visible = visible & keys  # (B, T_q, T_k)\n',
        '        visible = visible & torch.ones_like(keys)  # (B, T_q, T_k)\n',
    ),
    (
        '    return weights @ v  # (B, T_q, T_k) @ (B, T_k, hs_v) -> (B, T_q, hs_v)\n',
        '    if key_padding_mask is not None:\n'
        '        weights = weights.masked_fill(~keys, 0.0)  # the padding removed, too late\n'
        '    return weights @ v  # (B, T_q, T_k) @ (B, T_k, hs_v) -> (B, T_q, hs_v)\n',
    ),
]
