"""MISTAKE: qkv_bias ignored

A copy of the stage 7 solution with one bug: the three projections never have a bias, whatever qkv_bias says.
The structure check names it; the checks of values judge the module by the weights it holds (no biases), so the
mistake costs that one check.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)\n"
        "        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)\n"
        "        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)\n",
        "        self.W_query = nn.Linear(d_in, head_size, bias=False)\n"
        "        self.W_key = nn.Linear(d_in, head_size, bias=False)\n"
        "        self.W_value = nn.Linear(d_in, head_size, bias=False)\n",
    ),
]
