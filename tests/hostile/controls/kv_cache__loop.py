"""Control of the kv_cache loop attacks: the stage 11 solution with the scores of a step computed one cached position
at a time in a Python loop, without any trick."""

# The stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T_new, T_total)\n',
        '        cols = [(q * k[..., j : j + 1, :]).sum(dim=-1) for j in range(T_total)]  # one cached position at a time\n'
        '        scores = torch.stack(cols, dim=-1) / math.sqrt(self.head_size)  # (B, nh, T_new, T_total)\n',
    ),
]
