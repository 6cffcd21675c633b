"""MISTAKE: none

A copy of the stage 10 solution whose blockwise_attention takes the queries one row at a time and applies a whole-row
softmax over every visible key: no online softmax, and (1, T_k) scores per head. Below the (T_q, block_size) bound
whenever T_k <= T_q * block_size, so the memory check also measures one query against 96 keys.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "def blockwise_attention(",
        '''def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    outs = []
    for t in range(T_q):
        end = min(T_k, t + 1) if causal else T_k
        s = q[..., t : t + 1, :] @ k[..., :end, :].transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., 1, end)
        outs.append(torch.softmax(s, dim=-1) @ v[..., :end, :])
    return torch.cat(outs, dim=-2)


def _unused_blockwise_attention(''',
    ),
]
