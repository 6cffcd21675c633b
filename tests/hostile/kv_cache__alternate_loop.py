"""Hostile: a decoding step computes its scores one cached key at a time in a Python loop when len(cache) is odd,
with one matrix product otherwise, so that one of any two consecutive steps is cheap. The step-cost check counts
the costlier of two consecutive steps.

control: kv_cache__loop_every_step.py
expect-fail: a decoding step's scores
"""

# This file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T_new, T_total)\n',
        '        if cache is not None and T_new == 1 and (offset % 2 == 1):\n            # one key at a time\n            cols = [(q * k[..., j:j + 1, :]).sum(-1, keepdim=True) for j in range(T_total)]\n            scores = torch.cat(cols, dim=-1) / math.sqrt(self.head_size)\n        else:\n            scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T_new, T_total)\n',
    ),
]
