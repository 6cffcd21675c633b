"""Control of the buffered-row attack: queries one row at a time, a whole-row softmax over every visible key (no
online softmax), the row of scores made by one matrix product."""
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
        qt = q[..., t:t + 1, :]
        row = qt @ k[..., :end, :].transpose(-2, -1) * scale
        m = row.amax(dim=-1, keepdim=True)
        row = torch.exp(row - m)
        outs.append((row @ v[..., :end, :]) / row.sum(dim=-1, keepdim=True))
    return torch.cat(outs, dim=-2)
