"""CORRECT: the logits, keys and values padded to whole blocks with F.pad (constant_pad_nd), the padded keys masked to -inf."""
import math
import torch
import torch.nn.functional as F
def online_softmax(x, block_size):
    N = x.shape[-1]
    pad = (-N) % block_size
    xp = F.pad(x, (0, pad), value=float("-inf"))  # the padded logits count for nothing
    m = torch.full_like(x[..., :1], float("-inf"))
    l = torch.zeros_like(m)
    for i in range(0, N + pad, block_size):
        b = xp[..., i:i + block_size]
        mn = torch.maximum(m, b.amax(-1, keepdim=True))
        l = l * torch.exp(m - mn) + torch.exp(b - mn).sum(-1, keepdim=True)
        m = mn
    return torch.exp(x - m) / l
def blockwise_attention(q, k, v, block_size, causal=False):
    Tq, Tk = q.shape[-2], k.shape[-2]
    pad = (-Tk) % block_size
    # pad keys and values to whole blocks; padded keys are masked out below
    kp = F.pad(k, (0, 0, 0, pad))
    vp = F.pad(v, (0, 0, 0, pad))
    scale = 1.0 / math.sqrt(q.shape[-1])
    outs = []
    for i in range(0, Tq, block_size):
        qb = q[..., i:i + block_size, :] * scale
        i1 = i + qb.shape[-2]
        qpos = torch.arange(i, i1, device=q.device)[:, None]
        m = torch.full_like(qb[..., :1], float("-inf"))
        l = torch.zeros_like(m)
        acc = torch.zeros(*qb.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
        for j in range(0, Tk + pad, block_size):
            if causal and j >= i1:
                break
            s = qb @ kp[..., j:j + block_size, :].transpose(-1, -2)
            kpos = torch.arange(j, j + block_size, device=q.device)[None, :]
            hide = kpos >= Tk
            if causal:
                hide = hide | (kpos > qpos)
            s = s.masked_fill(hide, float("-inf"))
            mn = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - mn)
            r = torch.exp(m - mn)
            l = l * r + p.sum(-1, keepdim=True)
            acc = acc * r + p @ vp[..., j:j + block_size, :]
            m = mn
        outs.append(acc / l)
    return torch.cat(outs, -2)
