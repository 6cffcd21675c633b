"""Control: every step projects the whole sequence again from raw inputs kept in the cache, never reading the
cached keys and values.
"""

# This file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            k, v = cache.append(k, v)  # (B, nh, T_total, hs): only the new positions were projected\n',
        '            kept = getattr(cache, "_x", None)\n            if offset == 0:\n                kept = None\n            kept = x if kept is None else torch.cat([kept, x], 1)\n            cache._x = kept\n            k, v = cache.append(k, v)\n            n = kept.shape[1]\n            heads = lambda t: t.view(B, n, self.n_heads, self.head_size).transpose(1, 2)\n            k = heads(self.W_key(kept))\n            v = heads(self.W_value(kept))\n',
    ),
]
