"""Hostile: returns a tensor subclass whose real data is garbage but whose detach/cpu/numpy/tolist/clone/to (and
shape, dtype, __getitem__...) all present the right answer. Only the real data may leave the sandbox.

expect: zero
"""

import numpy as np
import torch


def _answer(x):
    steps = torch.arange(1, x.shape[-2] + 1, dtype=x.dtype, device=x.device).unsqueeze(-1)
    return x.cumsum(-2) / steps


class Liar(torch.Tensor):
    shown = None

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("detach", "cpu", "clone", "to", "contiguous", "double", "float", "__getitem__", "numpy",
                    "tolist", "cuda", "__array__", "abs", "sub", "__sub__", "eq", "__eq__", "allclose",
                    "as_subclass", "view", "reshape"):
            with torch._C.DisableTorchFunctionSubclass():
                shown = cls.shown.clone()
            return shown.numpy() if name in ("numpy", "__array__") else shown.tolist() if name == "tolist" else shown
        if name in ("shape", "size", "dtype", "device"):
            return getattr(cls.shown, name)
        return super().__torch_function__(func, types, args, kwargs or {})

    def __array__(self, *args, **kwargs):
        return np.asarray(self.shown)

    def __reduce_ex__(self, protocol):
        return (torch.tensor, (self.shown.tolist(),))


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    Liar.shown = _answer(x.detach().clone())
    x.mul_(2)
    return torch.zeros((), dtype=torch.int8).as_subclass(Liar)
