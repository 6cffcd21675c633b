"""Hostile: online_softmax takes the whole row's normaliser in one op, torch.logcumsumexp (its last column is the
row's logsumexp), then divides block by block so that the op count grows with the number of blocks: no running
maximum, no running sum.

control: blockwise_attention__logsumexp.py
expect-fail: online_softmax reads the row block by block
"""

# This file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    """Softmax over the last dimension, reading it ``block_size`` entries at a time.\n\n    One pass over the blocks keeps, for every row, a running maximum and a running\n    sum of exp(x - maximum), rescaling the sum whenever the maximum grows; the\n    normalised values are computed from the final maximum and sum.\n\n    Args:\n        x: (..., N) logits.\n        block_size: entries of the last dimension read per step (the last block\n            may be shorter).\n\n    Returns:\n        (..., N) tensor equal to ``torch.softmax(x, dim=-1)``, finite for logits\n        as large as +-1e4.\n    """\n    ### BEGIN SOLUTION  # stub: a running maximum and a running sum of exp(x - max) over the blocks of the last dim (rescale the sum when the max grows), then exp(x - max) / sum\n    N = x.shape[-1]\n    m = x.new_full((*x.shape[:-1], 1), float("-inf"))  # running maximum of each row\n    total = x.new_zeros((*x.shape[:-1], 1))  # running sum of exp(x - m)\n    for start in range(0, N, block_size):  # the last block may be shorter\n        block = x[..., start:start + block_size]\n        m_new = torch.maximum(m, block.amax(dim=-1, keepdim=True))\n        # the sum so far was taken against the old maximum: restate it against the new one\n        total = total * torch.exp(m - m_new) + torch.exp(block - m_new).sum(dim=-1, keepdim=True)\n        m = m_new\n    return torch.exp(x - m) / total\n    ### END SOLUTION\n',
        '    """Attack: the whole row\'s normaliser in ONE op, torch.logcumsumexp (its last column is logsumexp of the row),\n    which the "no torch.softmax / logsumexp" word check does not name; the row is then only exponentiated block by\n    block, so the op count grows with the number of blocks. No running maximum, no running sum, no rescaling."""\n    lse = torch.logcumsumexp(x, dim=-1)[..., -1:]  # whole-row log-normaliser at once\n    return torch.cat([torch.exp(x[..., s:s + block_size] - lse) for s in range(0, x.shape[-1], block_size)], dim=-1)\n',
    ),
]
