"""Weights built in float64 under @torch.no_grad() and cast to the requested dtype; the product with torch.tensordot
over the time dim, the new leading time dim moved back with movedim."""
import torch


@torch.no_grad()
def causal_mean_weights(T, *, device=None, dtype=None):
    dtype = dtype or torch.get_default_dtype()
    w = torch.ones(T, T, dtype=torch.float64, device=device).tril()
    w = w / w.sum(dim=1, keepdim=True)
    return w.to(dtype)


def causal_mean_matmul(x):
    W = causal_mean_weights(x.shape[-2], device=x.device, dtype=x.dtype)
    out = torch.tensordot(W, x, dims=([1], [x.dim() - 2]))  # (T, ..., C)
    return out.movedim(0, -2)
