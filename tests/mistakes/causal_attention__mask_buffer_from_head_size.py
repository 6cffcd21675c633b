"""MISTAKE: none

The mask buffer sized from head_size instead of context_length: the structure check sees a (head_size, head_size)
buffer, and a sequence longer than head_size gets a mask too small for its scores.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        mask = torch.ones(context_length, context_length, dtype=torch.bool).tril()\n',
        '        mask = torch.ones(head_size, head_size, dtype=torch.bool).tril()\n',
    ),
]
