"""MISTAKE: none

A copy of the stage 8 solution with one bug: out_proj is built with bias=False. The structure check says so;
every other check judges the module by the weights it holds (out_proj with no bias), so this one mistake costs
that one check, not every check that builds the module.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        self.out_proj = nn.Linear(d_out, d_out)\n",
        "        self.out_proj = nn.Linear(d_out, d_out, bias=False)\n",
    ),
]
