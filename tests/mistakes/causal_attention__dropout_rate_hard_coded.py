"""MISTAKE: none

nn.Dropout(0.1) hard-coded instead of nn.Dropout(dropout): dropout=0.0 still drops in training mode, and
dropout=0.5 drops at the wrong rate.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        self.dropout = nn.Dropout(dropout)\n',
        '        self.dropout = nn.Dropout(0.1)\n',
    ),
]
