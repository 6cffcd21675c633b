"""MISTAKE: none

The book's batched code: keys.transpose(1, 2), right for (B, T, d) input only. A single sequence (T, d_in) raises,
and with two leading dims (B1, B2, T, d) it swaps B2 with T.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        values = x @ self.W_value  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n',
        '        values = x @ self.W_value  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(1, 2)  # (B, T, T)\n',
    ),
    (
        '        values = self.W_value(x)  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n',
        '        values = self.W_value(x)  # (B, T, d_out)\n'
        '        scores = queries @ keys.transpose(1, 2)  # (B, T, T)\n',
    ),
]
