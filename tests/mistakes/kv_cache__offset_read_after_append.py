"""MISTAKE: no causal mask among the new tokens (none applied when a cache is given, or its rows read after cache.append, T_cached + T_new.., or from the buffer's end, self.mask[-T_new:], which hide nothing): each new token sees the later new ones

CachedMultiHeadAttention.forward reads len(cache) after appending the new keys and values, so its mask rows start T_new too late: within a chunk the new tokens see each other's future, and near context_length the mask's slice comes up short.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            offset = len(cache)  # x holds positions offset .. offset + T_new - 1\n            k, v = cache.append(k, v)  # (B, nh, T_total, hs): only the new positions were projected\n',
        '            k, v = cache.append(k, v)\n            offset = len(cache)\n',
    ),
]
