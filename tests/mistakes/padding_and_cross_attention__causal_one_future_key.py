"""MISTAKE: off-by-one mask (one future step visible: tril(diagonal=1), or mask rows one step late)

masked_attention's causal mask is tril(1): each query also sees the next key.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        visible = visible.tril()  # top-left: query t sees keys 0..t\n',
        '        visible = visible.tril(1)\n',
    ),
]
