"""Hostile: the control's loop over the cached positions, with the count of a step's operations kept flat by
identity operations on the scores (scores * 1.0) that the answer depends on, so no dead-node pruning removes them.

control: kv_cache__loop.py
expect-fail: operations do not grow
"""

# The stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T_new, T_total)\n',
        '        cols = [(q * k[..., j : j + 1, :]).sum(dim=-1) for j in range(T_total)]  # one cached position at a time\n'
        '        scores = torch.stack(cols, dim=-1) / math.sqrt(self.head_size)  # (B, nh, T_new, T_total)\n'
        '        for _ in range(max(0, 400 - 3 * T_total)):  # live identity ops: the same count whatever T_total\n'
        '            scores = scores * 1.0\n',
    ),
]
