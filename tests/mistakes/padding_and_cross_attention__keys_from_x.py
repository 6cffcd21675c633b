"""MISTAKE: keys and values projected from x instead of context

Self-attention habits: the keys and values are computed from x, so the context is never read.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        k = self.W_key(context).view(B, T_k, nh, hs).transpose(1, 2)  # (B, nh, T_k, hs)\n'
        '        v = self.W_value(context).view(B, T_k, nh, hs).transpose(1, 2)  # (B, nh, T_k, hs)\n',
        '        k = self.W_key(x).view(B, T_k, nh, hs).transpose(1, 2)  # (B, nh, T_k, hs)\n'
        '        v = self.W_value(x).view(B, T_k, nh, hs).transpose(1, 2)  # (B, nh, T_k, hs)\n',
    ),
]
