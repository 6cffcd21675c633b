"""Hostile: makes every torch comparison say "equal", then returns zeros.

expect: zero
"""

import torch
import torch.testing

always = lambda *args, **kwargs: True  # noqa: E731
torch.allclose = always
torch.equal = always
torch.isclose = lambda a, b, *args, **kwargs: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *args, **kwargs: None
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
torch.Tensor.__ne__ = lambda self, other: torch.zeros_like(self, dtype=torch.bool)
torch.Tensor.allclose = always
torch.Tensor.equal = always


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    return torch.zeros(())
