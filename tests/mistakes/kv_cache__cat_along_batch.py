"""MISTAKE: none

KVCache.append concatenates along dim 0, the batch, instead of time (dim -2). The first append check says the shape; where the next torch.cat fails, the message explains what torch.cat needs.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            self.keys = torch.cat([self.keys, k_new], dim=-2)  # time is dim -2\n            self.values = torch.cat([self.values, v_new], dim=-2)\n',
        '            self.keys = torch.cat([self.keys, k_new], dim=0)\n            self.values = torch.cat([self.values, v_new], dim=0)\n',
    ),
]
