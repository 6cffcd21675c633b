"""CORRECT: the solution with the causal mask's rows and columns taken as slices of a position table made once at
import (torch.arange(8192)): the call only reads views of it, and creates no tensor larger than (T_q, block_size)."""

import math

import torch

_MAX_POSITIONS = 8192
_POSITIONS = torch.arange(_MAX_POSITIONS)  # positions 0..8191, sliced per block


def _pos(start: int, end: int, device) -> torch.Tensor:
    return _POSITIONS[start:end].to(device)


def online_softmax(x: torch.Tensor, block_size: int) -> torch.Tensor:
    N = x.shape[-1]
    m = x.new_full((*x.shape[:-1], 1), float("-inf"))
    l = x.new_zeros((*x.shape[:-1], 1))
    for start in range(0, N, block_size):
        block = x[..., start:start + block_size]
        m_new = torch.maximum(m, block.amax(dim=-1, keepdim=True))
        l = l * torch.exp(m - m_new) + torch.exp(block - m_new).sum(dim=-1, keepdim=True)
        m = m_new
    return torch.exp(x - m) / l


def blockwise_attention(q, k, v, block_size, causal=False):
    T_q, T_k = q.shape[-2], k.shape[-2]
    if max(T_q, T_k) > _MAX_POSITIONS:
        raise ValueError(f"sequences longer than {_MAX_POSITIONS} positions are not supported")
    scale = 1.0 / math.sqrt(q.shape[-1])
    outputs = []
    for q0 in range(0, T_q, block_size):
        q_blk = q[..., q0:q0 + block_size, :] * scale
        q1 = q0 + q_blk.shape[-2]
        m = q_blk.new_full((*q_blk.shape[:-1], 1), float("-inf"))
        denom = q_blk.new_zeros((*q_blk.shape[:-1], 1))
        acc = q_blk.new_zeros((*q_blk.shape[:-1], v.shape[-1]))
        k_end = min(T_k, q1) if causal else T_k
        for k0 in range(0, k_end, block_size):
            k_blk, v_blk = k[..., k0:k0 + block_size, :], v[..., k0:k0 + block_size, :]
            k1 = k0 + k_blk.shape[-2]
            scores = q_blk @ k_blk.transpose(-2, -1)
            if causal and k1 - 1 > q0:
                rows = _pos(q0, q1, q.device).unsqueeze(-1)
                cols = _pos(k0, k1, q.device)
                scores = scores.masked_fill(cols > rows, float("-inf"))
            m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
            rescale = torch.exp(m - m_new)
            p = torch.exp(scores - m_new)
            denom = denom * rescale + p.sum(dim=-1, keepdim=True)
            acc = acc * rescale + p @ v_blk
            m = m_new
        outputs.append(acc / denom)
    return torch.cat(outputs, dim=-2)
