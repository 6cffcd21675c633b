"""MISTAKE: calls scaled_dot_product_attention (must be written by hand)

Hands the attention of the heads to PyTorch's fused kernel.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T, T)\n        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, nh, T, T)\n        out = merge_heads(weights @ v)  # (B, nh, T, hs) -> (B, T, d_out)\n',
        '        p = self.dropout.p if self.training else 0.0\n        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p)  # (B, nh, T, hs)\n        out = merge_heads(out)  # (B, T, d_out)\n',
    ),
    (
        'import torch\nfrom torch import nn\n',
        'import torch\nimport torch.nn.functional as F\nfrom torch import nn\n',
    ),
]
