"""MISTAKE: causal=True ignored (the future leaks in)

masked_attention accepts the causal argument but never builds the causal mask.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        visible = visible.tril()  # top-left: query t sees keys 0..t\n',
        '        pass  # the future stays visible\n',
    ),
]
