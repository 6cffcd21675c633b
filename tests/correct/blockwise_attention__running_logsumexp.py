"""CORRECT: online_softmax keeps a running log-sum-exp (torch.logsumexp of each block, merged with
torch.logaddexp): the running maximum and sum in log space, no softmax-family op wider than one block."""

# This correct file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '''    m = x.new_full((*x.shape[:-1], 1), float("-inf"))  # running maximum of each row
    total = x.new_zeros((*x.shape[:-1], 1))  # running sum of exp(x - m)
    for start in range(0, N, block_size):  # the last block may be shorter
        block = x[..., start:start + block_size]
        m_new = torch.maximum(m, block.amax(dim=-1, keepdim=True))
        # the sum so far was taken against the old maximum: restate it against the new one
        total = total * torch.exp(m - m_new) + torch.exp(block - m_new).sum(dim=-1, keepdim=True)
        m = m_new
    return torch.exp(x - m) / total
''',
        '''    lse = x.new_full((*x.shape[:-1], 1), float("-inf"))  # log of the running sum of exp(x)
    for start in range(0, N, block_size):
        block = x[..., start:start + block_size]
        lse = torch.logaddexp(lse, torch.logsumexp(block, dim=-1, keepdim=True))
    return torch.exp(x - lse)
''',
    ),
]
