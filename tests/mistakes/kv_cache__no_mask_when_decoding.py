"""MISTAKE: no causal mask among the new tokens (none applied when a cache is given, or its rows read after cache.append, T_cached + T_new.., or from the buffer's end, self.mask[-T_new:], which hide nothing): each new token sees the later new ones

Mask only without a cache (decode assumed one token at a time).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        weights = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)',
        '        weights = torch.softmax(scores if cache is not None else scores.masked_fill(~visible, float("-inf")), dim=-1)',
    ),
]
