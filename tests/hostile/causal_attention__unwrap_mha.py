"""Hostile: inspect.unwrap(F.multi_head_attention_forward) to reach the function the worker wrapped with its mark,
called with one head, identity weights and need_weights=True, then weights @ v. The wrapper keeps no __wrapped__
link, and the recorder finds multi_head_attention_forward's code on the stack anyway.

control: causal_attention__sdpa.py
expect: zero
"""

# This file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        'from torch import nn\n',
        'from torch import nn\nimport inspect\nimport torch.nn.functional as F\n\n_MHA_FORWARD = inspect.unwrap(F.multi_head_attention_forward)  # functools.wraps left __wrapped__\n\n\ndef _weights(q, k, hidden):\n    """softmax(q k^T / sqrt(hs)) with hidden positions masked, from torch\'s own multi-head attention (one head,\n    identity projections), its attention weights only."""\n    lead, (T_q, hs), T_k = q.shape[:-2], q.shape[-2:], k.shape[-2]\n    q2, k2 = q.reshape(-1, T_q, hs).transpose(0, 1), k.reshape(-1, T_k, hs).transpose(0, 1)\n    eye = torch.eye(hs, dtype=q.dtype, device=q.device)\n    _, w = _MHA_FORWARD(q2, k2, k2, hs, 1, None, None, None, None, False, 0.0, eye, None, training=False,\n                        need_weights=True, attn_mask=hidden, use_separate_proj_weight=True, q_proj_weight=eye,\n                        k_proj_weight=eye, v_proj_weight=eye, average_attn_weights=False)\n    return w.reshape(*lead, T_q, T_k)\n',
    ),
    (
        '    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)\n    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()  # (T_q, T_k)\n    scores = scores.masked_fill(~visible, float("-inf"))\n    weights = torch.softmax(scores, dim=-1)  # (B, T_q, T_k)\n    return weights @ v  # (B, T_q, T_k) @ (B, T_k, hs_v) -> (B, T_q, hs_v)\n',
        '    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()\n    return _weights(q, k, ~visible) @ v\n',
    ),
    (
        '        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)\n        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, T, T)\n        return weights @ v  # (B, T, T) @ (B, T, hs) -> (B, T, hs)\n',
        '        return self.dropout(_weights(q, k, ~self.mask[:T, :T])) @ v\n',
    ),
]
