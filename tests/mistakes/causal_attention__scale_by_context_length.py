"""MISTAKE: scaled by the square root of the sequence length (T, or context_length) instead of sqrt(d_k)

A copy of the stage 7 solution with one bug: the module divides its scores by sqrt(context_length), the mask's
size, instead of by sqrt(head_size). Where a check's T equals context_length this cannot be told from a
division by sqrt(T), and was once named that way.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)\n',
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(self.mask.shape[0])  # (B, T, T)\n',
    ),
]
