"""MISTAKE: the cache stores the unprojected inputs

Caches the inputs x and projects the keys and values of the whole sequence again at every step.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        q, k, v = (t.view(B, T_new, self.n_heads, self.head_size).transpose(1, 2)  # (B, nh, T_new, hs)\n                   for t in (self.W_query(x), self.W_key(x), self.W_value(x)))\n        offset = 0\n        if cache is not None:\n            offset = len(cache)  # x holds positions offset .. offset + T_new - 1\n            k, v = cache.append(k, v)  # (B, nh, T_total, hs): only the new positions were projected\n',
        '        offset = 0\n        x_all = x\n        if cache is not None:\n            offset = len(cache)\n            x_all, _ = cache.append(x, x)  # (B, T_total, d_in)\n        T_all = x_all.shape[1]\n        q = self.W_query(x).view(B, T_new, self.n_heads, self.head_size).transpose(1, 2)\n        k, v = (t.view(B, T_all, self.n_heads, self.head_size).transpose(1, 2)\n                for t in (self.W_key(x_all), self.W_value(x_all)))\n',
    ),
]
