"""MISTAKE: qkv_bias ignored

A copy of the stage 8 solution with one bug: the three projections always have a bias (nn.Linear's default),
whatever qkv_bias says. The structure check names it; elsewhere the extra biases are loaded as zeros, so the
module computes what the weights it was given say, and the mistake costs that one check.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
        "        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
        "        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)\n",
        "        self.W_query = nn.Linear(d_in, d_out)\n"
        "        self.W_key = nn.Linear(d_in, d_out)\n"
        "        self.W_value = nn.Linear(d_in, d_out)\n",
    ),
]
