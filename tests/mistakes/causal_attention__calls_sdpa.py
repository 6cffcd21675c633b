"""MISTAKE: calls scaled_dot_product_attention (must be written by hand)

Hands the work to PyTorch's fused kernel instead of writing it.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    ### BEGIN SOLUTION  # stub: scaled dot-product attention in which position t only attends to positions 0..t (future scores -inf before the softmax)\n    T_q, T_k = q.shape[-2], k.shape[-2]\n',
        '    ### BEGIN SOLUTION  # stub: scaled dot-product attention in which position t only attends to positions 0..t (future scores -inf before the softmax)\n    return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n    T_q, T_k = q.shape[-2], k.shape[-2]\n',
    ),
    (
        'import torch\nfrom torch import nn\n',
        'import torch\nimport torch.nn.functional as F\nfrom torch import nn\n',
    ),
]
