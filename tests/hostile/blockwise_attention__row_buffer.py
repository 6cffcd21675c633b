"""Hostile: the control's whole-row softmax, its row of scores kept in a zeros buffer made first (from no input)
and filled one key block at a time in place: every op result is a block-sized slice, so a measure that fixed what
a tensor depends on when it was made saw no (1, T_k) scores.

control: blockwise_attention__row_softmax.py
expect-fail: never creates a tensor larger
"""
import math
import torch


def online_softmax(x, block_size):
    m = x.amax(dim=-1, keepdim=True)
    e = torch.exp(x - m)
    out = e / e.sum(dim=-1, keepdim=True)
    return out


def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    outs = []
    for t in range(T_q):
        end = min(T_k, t + 1) if causal else T_k
        row = torch.zeros((*q.shape[:-2], 1, end), dtype=q.dtype, device=q.device)  # the whole row of scores
        qt = q[..., t:t + 1, :]
        for k0 in range(0, end, block_size):
            k1 = min(end, k0 + block_size)
            row[..., k0:k1] = qt @ k[..., k0:k1, :].transpose(-2, -1) * scale
        m = row.amax(dim=-1, keepdim=True)  # whole-row maximum
        for k0 in range(0, end, block_size):
            row[..., k0:k0 + block_size].sub_(m).exp_()
        outs.append((row @ v[..., :end, :]) / row.sum(dim=-1, keepdim=True))
    return torch.cat(outs, dim=-2)
