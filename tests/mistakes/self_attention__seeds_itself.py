"""MISTAKE: __init__ calls torch.manual_seed itself

Copies the notebooks' ``torch.manual_seed(123)`` into ``SelfAttentionParams.__init__``: the table of the notebooks
comes out right, but every module gets the same weights whatever seed its caller chose.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        self.W_query = nn.Parameter(torch.rand(d_in, d_out))\n",
        "        torch.manual_seed(123)  # the notebooks' seed\n        self.W_query = nn.Parameter(torch.rand(d_in, d_out))\n",
    ),
]
