"""MISTAKE: recomputes the whole sequence every step

Caches the inputs and runs full causal attention over the whole sequence at every step, keeping the last rows.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        B, T_new, _ = x.shape\n        q, k, v = (t.view(B, T_new, self.n_heads, self.head_size).transpose(1, 2)  # (B, nh, T_new, hs)\n                   for t in (self.W_query(x), self.W_key(x), self.W_value(x)))\n        offset = 0\n        if cache is not None:\n            offset = len(cache)  # x holds positions offset .. offset + T_new - 1\n            k, v = cache.append(k, v)  # (B, nh, T_total, hs): only the new positions were projected\n',
        '        B, T_new, _ = x.shape\n        offset = 0\n        if cache is not None:\n            offset = len(cache)\n            x, _ = cache.append(x, x)  # the whole sequence so far\n        T_all = x.shape[1]\n        q, k, v = (t.view(B, T_all, self.n_heads, self.head_size).transpose(1, 2)\n                   for t in (self.W_query(x), self.W_key(x), self.W_value(x)))\n',
    ),
    (
        '        visible = self.mask[offset:offset + T_new, :T_total]  # the mask rows of the new positions\n',
        '        visible = self.mask[:T_total, :T_total]\n',
    ),
    (
        '        out = (weights @ v).transpose(1, 2).reshape(B, T_new, -1)  # (B, T_new, d_out)\n',
        '        out = (weights @ v).transpose(1, 2).reshape(B, T_total, -1)[:, offset:]\n',
    ),
]
