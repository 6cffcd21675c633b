"""MISTAKE: qkv_bias ignored

Builds the nn.Linear layers with their default bias, whatever qkv_bias says.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)\n',
        '        self.W_query = nn.Linear(d_in, d_out)\n        self.W_key = nn.Linear(d_in, d_out)\n        self.W_value = nn.Linear(d_in, d_out)\n',
    ),
]
