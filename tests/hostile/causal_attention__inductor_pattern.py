"""Hostile: the attention comes from torch's own pattern functions for scaled_dot_product_attention
(torch._inductor.fx_passes.fuse_attention._sfdp_pattern_5 and _6, the second with dropout): softmax(q k^T / s +
mask) @ v written by torch with ordinary ops, no fused kernel. The recorder finds torch's attention code on the
stack of any op it records.

control: causal_attention__sdpa.py
expect: zero
"""

# This file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        'from torch import nn\n',
        'from torch import nn\nfrom torch._inductor.fx_passes.fuse_attention import _sfdp_pattern_5 as _ATT, _sfdp_pattern_6 as _ATT_DROP\n',
    ),
    (
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()  # (T_q, T_k)\n    scores = scores.masked_fill(~visible, float("-inf"))\n    weights = torch.softmax(scores, dim=-1)  # (B, T_q, T_k)\n    return weights @ v  # (B, T_q, T_k) @ (B, T_k, hs_v) -> (B, T_q, hs_v)\n',
        '    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()\n    bias = torch.zeros(T_q, T_k, dtype=q.dtype, device=q.device).masked_fill(~visible, float("-inf"))\n    return _ATT(q, k, v, bias, math.sqrt(q.shape[-1]))\n',
    ),
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)\n        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, T, T)\n        return weights @ v  # (B, T, T) @ (B, T, hs) -> (B, T, hs)\n',
        '        bias = torch.zeros(T, T, dtype=q.dtype, device=q.device).masked_fill(~self.mask[:T, :T], float("-inf"))\n        if self.training and self.dropout.p > 0:\n            return _ATT_DROP(q, k, v, bias, math.sqrt(k.shape[-1]), self.dropout.p)\n        return _ATT(q, k, v, bias, math.sqrt(k.shape[-1]))\n',
    ),
]
