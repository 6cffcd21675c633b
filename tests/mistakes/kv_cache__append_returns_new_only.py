"""MISTAKE: the cache not used (new tokens attend only to each other: forward ignores the cache, or append returns only the new keys and values)
KVCache.append stores every key and value but returns only the new ones, so the forward, which attends with what
append returns, sees only the new positions.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "            self.values = torch.cat([self.values, v_new], dim=-2)\n        return self.keys, self.values\n",
        "            self.values = torch.cat([self.values, v_new], dim=-2)\n        return k_new, v_new\n",
    ),
]
