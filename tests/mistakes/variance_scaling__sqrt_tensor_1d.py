"""MISTAKE: none
The scale as torch.sqrt(torch.tensor([d_k])): a float32 tensor of shape (1,), not a 0-d one, so it takes part in
type promotion: float16 scores come back float32, and float64 ones carry float32's rounding of sqrt(d_k).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        'import math\n\nimport torch\n',
        'import torch\n',
    ),
    (
        '    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, d_k) @ (B, d_k, T) -> (B, T, T)\n',
        '    return q @ k.transpose(-2, -1) / torch.sqrt(torch.tensor([d_k]))  # a (1,) float32 scale\n',
    ),
]
