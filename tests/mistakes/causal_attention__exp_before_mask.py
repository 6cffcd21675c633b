"""MISTAKE: none

A copy of the stage 7 solution with one bug in causal_attention: the softmax is written by hand and the future
is taken out after exp (multiplied by 0) instead of set to -inf before it. Shifted by the visible maximum, the
values are right in float32 and float64; in float16 and bfloat16 a large future score overflows exp to inf, and
inf * 0 is NaN. The half-precision check has a fixed input with such a score, so this fails for every seed.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = scores.masked_fill(~visible, float("-inf"))\n'
        "    weights = torch.softmax(scores, dim=-1)  # (B, T_q, T_k)\n",
        '    top = scores.masked_fill(~visible, float("-inf")).amax(dim=-1, keepdim=True)\n'
        "    e = torch.exp(scores - top) * visible\n"
        "    weights = e / e.sum(dim=-1, keepdim=True)  # (B, T_q, T_k)\n",
    ),
]
