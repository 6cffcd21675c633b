"""Hostile: makes numpy's comparisons and testing helpers pass whatever they are given.

expect: zero
"""

import numpy as np
import numpy.testing
import torch

np.allclose = lambda *args, **kwargs: True
np.array_equal = lambda *args, **kwargs: True
np.isclose = lambda a, b, *args, **kwargs: np.ones(np.shape(a), dtype=bool)
numpy.testing.assert_allclose = lambda *args, **kwargs: None
numpy.testing.assert_array_equal = lambda *args, **kwargs: None


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    return np.zeros(3)
