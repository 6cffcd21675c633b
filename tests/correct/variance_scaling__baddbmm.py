"""CORRECT: leading dims folded into one batch dim and the scaled product done by torch.baddbmm(beta=0,
alpha=1/sqrt(d_k)) on an empty tensor, as Megatron/BLOOM attention code does; unfolded afterwards."""
import math

import torch


def scaled_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    *lead, T_q, d_k = q.shape
    T_k = k.shape[-2]
    q3 = q.reshape(-1, T_q, d_k)
    k3 = k.reshape(-1, T_k, d_k)
    out = torch.empty(q3.shape[0], T_q, T_k, dtype=q.dtype, device=q.device)
    out = torch.baddbmm(out, q3, k3.transpose(1, 2), beta=0.0, alpha=1.0 / math.sqrt(d_k))
    return out.reshape(*lead, T_q, T_k)
