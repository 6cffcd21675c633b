"""MISTAKE: none

Divides by a float32 constant: torch.tensor(sqrt(d_k), dtype=torch.float32) rounds the scale, so float64 inputs
are computed with a float32-precision scale. The values are right to float32's precision; only the float64
precision check may notice.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n',
        '    scores = q @ k.transpose(-2, -1) / torch.tensor(q.shape[-1], dtype=torch.float32).sqrt()  # (B, T_q, T_k)\n',
    ),
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)\n',
        '        scores = q @ k.transpose(-2, -1) / torch.tensor(k.shape[-1], dtype=torch.float32).sqrt()  # (B, T, T)\n',
    ),
]
