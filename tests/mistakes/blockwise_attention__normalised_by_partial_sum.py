"""MISTAKE: none

online_softmax writes each block's output as soon as the block is read, exp(block - m) / total with the maximum
and sum so far: the early blocks are normalised by a partial sum (a near-miss of each block normalised on its own)."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    total = x.new_zeros((*x.shape[:-1], 1))  # running sum of exp(x - m)\n",
        "    total = x.new_zeros((*x.shape[:-1], 1))  # running sum of exp(x - m)\n    out = []\n",
    ),
    (
        "        m = m_new\n    return torch.exp(x - m) / total\n",
        "        m = m_new\n        out.append(torch.exp(block - m) / total)\n    return torch.cat(out, dim=-1)\n",
    ),
]
