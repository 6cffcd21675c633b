"""MISTAKE: none

KVCache keeps keys and values stacked in one tensor (torch.stack([k_new, v_new])): it only works when the values
have the keys' size, but append's docstring allows hs_v != hs."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        if self.keys is None or self.values is None:\n"
        "            self.keys, self.values = k_new, v_new\n"
        "        else:\n"
        "            self.keys = torch.cat([self.keys, k_new], dim=-2)  # time is dim -2\n"
        "            self.values = torch.cat([self.values, v_new], dim=-2)\n"
        "        return self.keys, self.values\n",
        "        kv = torch.stack([k_new, v_new])  # (2, B, nh, T_new, hs)\n"
        "        self.kv = kv if self.keys is None else torch.cat([self.kv, kv], dim=-2)\n"
        "        self.keys, self.values = self.kv[0], self.kv[1]\n"
        "        return self.keys, self.values\n",
    ),
]
