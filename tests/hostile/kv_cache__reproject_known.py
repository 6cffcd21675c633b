"""Hostile: the cache also keeps the raw inputs of every position since 0; each forward appends to the cache but
projects all the positions it has inputs for again with W_key and W_value, and reads the cache only for positions
it has no input for (the one the judge appends). The checked step is taken by a second module with other weights,
so keys projected again are not the cached ones.

control: kv_cache__reproject_all.py
expect-fail: the cache holds exactly
"""

# This file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            k, v = cache.append(k, v)  # (B, nh, T_total, hs): only the new positions were projected\n',
        '            kept = getattr(cache, "_x", None)\n            if offset == 0:\n                kept = None\n            if (kept is None and offset == 0) or (kept is not None and kept.shape[1] == offset):\n                kept = x if kept is None else torch.cat([kept, x], 1)  # inputs of positions 0.. known\n            cache._x = kept\n            k, v = cache.append(k, v)\n            if kept is not None:\n                # project every position whose input is kept again; read the cache only for the others\n                n = kept.shape[1]\n                heads = lambda t: t.view(B, n, self.n_heads, self.head_size).transpose(1, 2)\n                k = torch.cat([heads(self.W_key(kept)), k[..., n:, :]], dim=-2)\n                v = torch.cat([heads(self.W_value(kept)), v[..., n:, :]], dim=-2)\n',
    ),
]
