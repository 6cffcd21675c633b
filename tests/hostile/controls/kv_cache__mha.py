"""Control: the same code with plain nn.MultiheadAttention (identity projections, kept in a global dict): the
stage earns nothing.
"""

# This file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        'from torch import nn\n',
        'from torch import nn\n\n\n_MHA = {}\n\n\ndef _mha(E, nh):\n    """torch\'s own nn.MultiheadAttention subclass (quantizable), its projections off; not a submodule."""\n    if (E, nh) not in _MHA:\n        state = torch.random.get_rng_state()\n        m = nn.MultiheadAttention(E, nh, bias=False)\n        torch.random.set_rng_state(state)\n        with torch.no_grad():\n            m.in_proj_weight.copy_(torch.cat([torch.eye(E)] * 3))\n            m.out_proj.weight.copy_(torch.eye(E))\n        _MHA[(E, nh)] = m\n    return _MHA[(E, nh)]\n',
    ),
    (
        '        if T_total > self.mask.shape[0]:\n            raise ValueError(f"{T_total} positions exceed context_length {self.mask.shape[0]}")\n        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T_new, T_total)\n        visible = self.mask[offset:offset + T_new, :T_total]  # the mask rows of the new positions\n        weights = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)\n        out = (weights @ v).transpose(1, 2).reshape(B, T_new, -1)  # (B, T_new, d_out)\n        return self.out_proj(out)\n',
        '        merge = lambda t: t.transpose(1, 2).reshape(B, t.shape[-2], -1).transpose(0, 1)  # (T, B, E)\n        m = _mha(self.n_heads * self.head_size, self.n_heads)\n        m.train(False)\n        m.to(q.dtype)\n        out, _ = m(merge(q), merge(k), merge(v), need_weights=False,\n                   attn_mask=~self.mask[offset:offset + T_new, :T_total])\n        return self.out_proj(out.transpose(0, 1))\n',
    ),
]
