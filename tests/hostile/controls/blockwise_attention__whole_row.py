"""Control of the blockwise_attention attacks: online_softmax over the whole row at once, by hand (no loop, no
torch.softmax); blockwise_attention with a running softmax over key blocks, whose causal future blocks are masked,
not skipped. No trick."""
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
    outputs = []
    for q0 in range(0, T_q, block_size):
        q_blk = q[..., q0:q0 + block_size, :] * scale
        q1 = q0 + q_blk.shape[-2]
        m = q_blk.new_full((*q_blk.shape[:-1], 1), float("-inf"))
        denom = q_blk.new_zeros((*q_blk.shape[:-1], 1))
        acc = q_blk.new_zeros((*q_blk.shape[:-1], v.shape[-1]))
        for k0 in range(0, T_k, block_size):  # every key block, also those wholly in the future
            k_blk, v_blk = k[..., k0:k0 + block_size, :], v[..., k0:k0 + block_size, :]
            k1 = k0 + k_blk.shape[-2]
            scores = q_blk @ k_blk.transpose(-2, -1)
            if causal and k1 - 1 > q0:
                rows = torch.arange(q0, q1, device=q.device).unsqueeze(-1)
                cols = torch.arange(k0, k1, device=q.device)
                scores = scores.masked_fill(cols > rows, float("-inf"))
            m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
            # a wholly masked block keeps m at -inf for the first rows: guard the rescale
            safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
            rescale = torch.exp(m - safe)
            p = torch.exp(scores - safe)
            denom = denom * rescale + p.sum(dim=-1, keepdim=True)
            acc = acc * rescale + p @ v_blk
            m = m_new
        outputs.append(acc / denom)
    return torch.cat(outputs, dim=-2)
