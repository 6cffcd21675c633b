"""MISTAKE: none

An off-by-one in the overflow test (>= instead of >): the cache refuses the append that would fill it exactly.
It costs the overflow check, whose message says so, and no decoding check.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        if len(self) + T_new > self.max_len:\n",
        "        if len(self) + T_new >= self.max_len:\n",
    ),
]
