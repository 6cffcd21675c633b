"""MISTAKE: W_query, W_key, W_value created in the wrong order

Creates W_key before W_query, so the seeded random numbers land in the wrong matrices.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        self.W_key = nn.Parameter(torch.rand(d_in, d_out))\n',
        '',
    ),
    (
        '        ### BEGIN SOLUTION  # stub: create self.W_query, self.W_key and self.W_value (in this order), each nn.Parameter(torch.rand(d_in, d_out))\n        self.W_query = nn.Parameter(torch.rand(d_in, d_out))\n',
        '        ### BEGIN SOLUTION  # stub: create self.W_query, self.W_key and self.W_value (in this order), each nn.Parameter(torch.rand(d_in, d_out))\n        self.W_key = nn.Parameter(torch.rand(d_in, d_out))\n        self.W_query = nn.Parameter(torch.rand(d_in, d_out))\n',
    ),
]
