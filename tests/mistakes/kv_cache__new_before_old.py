"""MISTAKE: none

append puts the new keys and values before the cached ones (torch.cat([k_new, self.keys])): the cache holds the
positions in reverse order of their chunks."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "            self.keys = torch.cat([self.keys, k_new], dim=-2)  # time is dim -2\n"
        "            self.values = torch.cat([self.values, v_new], dim=-2)\n",
        "            self.keys = torch.cat([k_new, self.keys], dim=-2)\n"
        "            self.values = torch.cat([v_new, self.values], dim=-2)\n",
    ),
]
