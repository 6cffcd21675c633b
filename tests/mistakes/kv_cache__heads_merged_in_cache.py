"""MISTAKE: none

forward appends the projected keys and values before splitting the heads, (B, T, d_out), and splits what append
returns: the decoding is right, but the cache does not hold (B, nh, T, hs) as KVCache.append's docstring says."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        q, k, v = (t.view(B, T_new, self.n_heads, self.head_size).transpose(1, 2)  # (B, nh, T_new, hs)\n"
        "                   for t in (self.W_query(x), self.W_key(x), self.W_value(x)))\n"
        "        offset = 0\n"
        "        if cache is not None:\n"
        "            offset = len(cache)  # x holds positions offset .. offset + T_new - 1\n"
        "            k, v = cache.append(k, v)  # (B, nh, T_total, hs): only the new positions were projected\n",
        "        q = self.W_query(x).view(B, T_new, self.n_heads, self.head_size).transpose(1, 2)\n"
        "        k, v = self.W_key(x), self.W_value(x)  # (B, T_new, d_out)\n"
        "        offset = 0\n"
        "        if cache is not None:\n"
        "            offset = len(cache)\n"
        "            k, v = cache.append(k, v)  # (B, T_total, d_out)\n"
        "        k, v = (t.view(B, t.shape[1], self.n_heads, self.head_size).transpose(1, 2) for t in (k, v))\n",
    ),
]
