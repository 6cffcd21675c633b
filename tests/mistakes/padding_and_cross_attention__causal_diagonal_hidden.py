"""MISTAKE: diagonal masked too (a step cannot see itself)

masked_attention's causal mask is tril(-1): a query cannot see the key at its own position.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        visible = visible.tril()  # top-left: query t sees keys 0..t\n',
        '        visible = visible.tril(-1)  # the diagonal hidden too\n',
    ),
]
