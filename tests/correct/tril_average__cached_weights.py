"""CORRECT: the weights of each (T, device, dtype) computed once with torch.tril and cached (functools.lru_cache):
the graph traced after the call sees the cached matrix as a constant whose size grows with T."""
import functools

import torch


@functools.lru_cache(maxsize=None)
def _weights(T, device, dtype):
    w = torch.tril(torch.ones(T, T, device=device, dtype=dtype))
    return w / w.sum(dim=-1, keepdim=True)


def causal_mean_weights(T, *, device=None, dtype=None):
    return _weights(T, None if device is None else str(device), dtype).clone()


def causal_mean_matmul(x):
    return _weights(x.shape[-2], str(x.device), x.dtype) @ x
