"""MISTAKE: none

A copy of the stage 8 solution with one bug: the softmax is written by hand and the future is taken out after
exp (multiplied by 0) instead of set to -inf before it. Right in float32 and float64; in float16 and bfloat16 a
large future score overflows exp to inf, and inf * 0 is NaN. The half-precision check has a fixed input with
such a score, so this fails for every seed.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n'
        "        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, nh, T, T)\n",
        "        keep = self.mask[:T, :T]\n"
        '        top = scores.masked_fill(~keep, float("-inf")).amax(dim=-1, keepdim=True)\n'
        "        e = torch.exp(scores - top) * keep\n"
        "        weights = self.dropout(e / e.sum(dim=-1, keepdim=True))  # (B, nh, T, T)\n",
    ),
]
