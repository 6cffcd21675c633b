"""CORRECT: the running normaliser kept as a log-sum-exp (each block's merged in log space), the output kept
normalised and re-weighted block by block, torch.where for the causal mask, .mT, the future key blocks skipped
by a break."""
import torch


def _lse(s):
    """log(sum(exp(s))) over the last dim, kept (logsumexp spelt out: the whole row is never handed to a softmax)."""
    m = s.amax(dim=-1, keepdim=True)
    return m + torch.log(torch.exp(s - m).sum(dim=-1, keepdim=True))


def _merge(a, b):
    """log(exp(a) + exp(b)), a possibly -inf."""
    m = torch.maximum(a, b)
    return m + torch.log(torch.exp(a - m) + torch.exp(b - m))


def online_softmax(x, block_size):
    lse = torch.full_like(x[..., :1], float("-inf"))
    for start in range(0, x.shape[-1], block_size):
        lse = _merge(lse, _lse(x[..., start:start + block_size]))
    return torch.exp(x - lse)


def blockwise_attention(q, k, v, block_size, causal=False):
    q = q / q.shape[-1] ** 0.5
    T_q, T_k = q.shape[-2], k.shape[-2]
    rows_out = []
    for q0 in range(0, T_q, block_size):
        qb = q[..., q0:q0 + block_size, :]
        last = q0 + qb.shape[-2] - 1
        rows = torch.arange(q0, last + 1, device=q.device)[:, None]
        lse = torch.full_like(qb[..., :1], float("-inf"))
        out = torch.zeros(*qb.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
        for k0 in range(0, T_k, block_size):
            if causal and k0 > last:
                break
            s = qb @ k[..., k0:k0 + block_size, :].mT
            if causal:
                cols = torch.arange(k0, k0 + s.shape[-1], device=q.device)
                s = torch.where(cols <= rows, s, float("-inf"))
            new_lse = _merge(lse, _lse(s))
            out = out * torch.exp(lse - new_lse) + torch.exp(s - new_lse) @ v[..., k0:k0 + block_size, :]
            lse = new_lse
        rows_out.append(out)
    return torch.cat(rows_out, dim=-2)
