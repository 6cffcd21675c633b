"""MISTAKE: upper instead of lower triangle (torch.triu)

masked_attention's causal mask is triu: each query sees itself and the future, not the past.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        visible = visible.tril()  # top-left: query t sees keys 0..t\n',
        '        visible = visible.triu()\n',
    ),
]
